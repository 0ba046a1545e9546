// The seam between the engine and the optional CUDA backend. The engine calls only these
// functions. A build with CUDA defines them in src/backend/cuda_loader.cpp, which loads the CUDA
// backend (src/backend/cuda/, its own library libkerascpp_cuda.so with cuBLAS, cuDNN and NCCL) only when
// a GPU is asked for, so a CPU-only process never maps those libraries; a build without CUDA
// defines them in src/backend/no_gpu.cpp and reports plainly why no GPU can be used.
#pragma once
#include <array>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "backend/device_memory.hpp"
#include "distribute/collectives/device_collectives.hpp"
#include "kerascpp/backend/backend.hpp"

namespace kerascpp::detail {

// A cuBLAS/cuDNN backend on GPU `device`; throws kerascpp::Error when that is impossible.
std::unique_ptr<Backend> make_gpu_backend(int device);

// An asynchronous host->GPU copy: the host tensor is copied into pinned memory and from there
// by the device's copy stream, so the transfer of the next batch overlaps the current step.
struct PendingUpload {
  Tensor tensor;               // on the GPU; valid for `backend`'s stream after wait_upload
  std::shared_ptr<void> done;  // the copy's completion event and pinned buffer
};
// The copy starts after the work already queued on `backend`'s stream (so it never writes a
// block that stream is still using) and runs beside what is queued after it.
PendingUpload upload_async(const Tensor& host, Backend& backend);
// Makes `backend`'s stream wait for the upload to land (the host does not wait).
void wait_upload(const PendingUpload& upload, Backend& backend);

// Makes `device` the calling thread's current CUDA device until the returned token is dropped
// (a replica's step runs inside one).
std::shared_ptr<void> enter_gpu(int device);

// What libkerascpp_cuda.so hands the loader: the CUDA implementations of the functions above.
// The library exports one C function, kKerasCppCudaSeamSymbol, returning a pointer to it. Both
// sides are built together from this header, so the struct needs no versioning beyond its name.
struct GpuSeam {
  int (*device_count)(std::string* reason);  // the CUDA runtime's count; reason set when 0
  DeviceMemoryOps memory;
  std::unique_ptr<Backend> (*make_backend)(int device);
  PendingUpload (*upload_async)(const Tensor& host, Backend& backend);
  void (*wait_upload)(const PendingUpload& upload, Backend& backend);
  std::unique_ptr<DeviceCollectives> (*make_collectives)(const std::vector<Backend*>& replicas,
                                                         distribute::CrossDeviceOpsKind ops, const NcclSpan* span);
  std::array<char, 128> (*nccl_unique_id)();
  std::shared_ptr<void> (*enter_gpu)(int device);
};
inline constexpr const char* kKerasCppCudaLibrary = "libkerascpp_cuda.so";
inline constexpr const char* kKerasCppCudaSeamSymbol = "kerascpp_cuda_seam_v1";

}  // namespace kerascpp::detail
