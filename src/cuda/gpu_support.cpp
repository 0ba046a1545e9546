// The GPU seam (backend/gpu_support.hpp) of a build with the CUDA backend.
#include "backend/gpu_support.hpp"

#include <fmt/format.h>

#include "cuda/cuda_backend.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/device_runtime.hpp"

namespace kerascpp::detail {

const GpuAvailability& gpu_availability() {
  static const GpuAvailability a = [] {
    GpuAvailability r;
    r.built = true;
    r.device_count = cuda::visible_device_count(&r.reason);
    return r;
  }();
  return a;
}

namespace {

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

const DeviceMemoryOps kOps{allocate, release, copy, zero};

void require_gpu(int device) {
  const GpuAvailability& a = gpu_availability();
  if (device < 0 || device >= a.device_count)
    throw DeviceError(fmt::format("gpu:{} does not exist: {}", device,
                                  a.device_count == 0 ? a.reason
                                                      : fmt::format("this machine has {} GPU(s), gpu:0..gpu:{}",
                                                                    a.device_count, a.device_count - 1)));
}

}  // namespace

const DeviceMemoryOps* gpu_memory_ops() { return &kOps; }

std::unique_ptr<Backend> make_gpu_backend(int device) {
  require_gpu(device);
  return std::make_unique<cuda::CudaBackend>(device);
}

std::shared_ptr<void> enter_gpu(int device) {
  require_gpu(device);
  return std::make_shared<cuda::DeviceGuard>(device);
}

}  // namespace kerascpp::detail
