// Status checks for the CUDA libraries: any failure becomes a kerascpp::Error naming the call,
// the library's own message and where it happened. Host-compiled code only (not .cu files).
#pragma once
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>
#include <nccl.h>

namespace kerascpp::cuda {

[[noreturn]] void throw_failure(const char* library, const char* call, const char* message, const char* file, int line);

}  // namespace kerascpp::cuda

#define KCPP_CUDA_CHECK(call)                                                                               \
  do {                                                                                                      \
    cudaError_t kcpp_status_ = (call);                                                                      \
    if (kcpp_status_ != cudaSuccess)                                                                        \
      ::kerascpp::cuda::throw_failure("CUDA", #call, cudaGetErrorString(kcpp_status_), __FILE__, __LINE__); \
  } while (0)
#define KCPP_CUBLAS_CHECK(call)                                                                                  \
  do {                                                                                                           \
    cublasStatus_t kcpp_status_ = (call);                                                                        \
    if (kcpp_status_ != CUBLAS_STATUS_SUCCESS)                                                                   \
      ::kerascpp::cuda::throw_failure("cuBLAS", #call, cublasGetStatusString(kcpp_status_), __FILE__, __LINE__); \
  } while (0)
#define KCPP_CUDNN_CHECK(call)                                                                                \
  do {                                                                                                        \
    cudnnStatus_t kcpp_status_ = (call);                                                                      \
    if (kcpp_status_ != CUDNN_STATUS_SUCCESS)                                                                 \
      ::kerascpp::cuda::throw_failure("cuDNN", #call, cudnnGetErrorString(kcpp_status_), __FILE__, __LINE__); \
  } while (0)
#define KCPP_NCCL_CHECK(call)                                                                               \
  do {                                                                                                      \
    ncclResult_t kcpp_status_ = (call);                                                                     \
    if (kcpp_status_ != ncclSuccess)                                                                        \
      ::kerascpp::cuda::throw_failure("NCCL", #call, ncclGetErrorString(kcpp_status_), __FILE__, __LINE__); \
  } while (0)
