// The CUDA implementation of the GPU seam (backend/gpu_support.hpp), handed to libkerascpp's
// loader (backend/cuda_loader.cpp) through kerascpp_cuda_seam_v1 when a GPU is first asked for.
#include "backend/cuda/cuda_backend.hpp"
#include "backend/cuda/cuda_check.hpp"
#include "backend/cuda/device_runtime.hpp"
#include "backend/cuda/gpu_seam.hpp"

namespace kerascpp::detail {
namespace {

int device_count(std::string* reason) { return cuda::visible_device_count(reason); }

void* allocate(Device d, std::size_t n) { return cuda::device_allocate(d.index, n); }
void release(Device d, void* p, std::size_t n) { cuda::device_release(d.index, p, n); }

void copy(void* dst, Device dst_dev, const void* src, Device src_dev, std::size_t n) {
  // Unified addressing lets the runtime tell the direction from the pointers. The legacy default
  // stream orders the copy after the work already queued on the replicas' blocking streams.
  const Device& gpu = dst_dev.kind == Device::Kind::gpu ? dst_dev : src_dev;
  cuda::DeviceGuard guard(gpu.index);
  KCPP_CUDA_CHECK(cudaMemcpy(dst, src, n, cudaMemcpyDefault));
}

void zero(Device d, void* p, std::size_t n) {
  cuda::DeviceGuard guard(d.index);
  KCPP_CUDA_CHECK(cudaMemset(p, 0, n));
}

// The loader (backend/cuda_loader.cpp) has checked that `device` exists.
std::unique_ptr<Backend> make_backend(int device) { return std::make_unique<cuda::CudaBackend>(device); }
std::shared_ptr<void> enter_gpu(int device) { return std::make_shared<cuda::DeviceGuard>(device); }

const GpuSeam kSeam{device_count,     {allocate, release, copy, zero}, make_backend,        cuda_upload_async,
                    cuda_wait_upload, cuda_make_gpu_collectives,       cuda_nccl_unique_id, enter_gpu};

}  // namespace
}  // namespace kerascpp::detail

const kerascpp::detail::GpuSeam* kerascpp_cuda_seam_v1() { return &kerascpp::detail::kSeam; }
