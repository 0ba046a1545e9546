// State of the cuBLAS/cuDNN half of CudaBackend (see cuda_backend.hpp).
#pragma once
#include "cuda/cuda_check.hpp"

namespace kerascpp::cuda {

struct DnnState {
  explicit DnnState(cudaStream_t stream);
  ~DnnState();
  DnnState(const DnnState&) = delete;
  DnnState& operator=(const DnnState&) = delete;
};

}  // namespace kerascpp::cuda
