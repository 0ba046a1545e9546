#include "backend/cuda/cuda_backend.hpp"

#include <fmt/format.h>

#include "backend/cuda/device_runtime.hpp"
#include "backend/cuda/dnn_state.hpp"
#include "backend/cuda/kernel_state.hpp"
#include "backend/cuda/phase_timeline.hpp"

namespace kerascpp::cuda {

void throw_failure(const char* library, const char* call, const char* message, const char* file, int line) {
  throw DeviceError(fmt::format("{} call failed: {} returned \"{}\" ({}:{})", library, call, message, file, line));
}

CudaBackend::CudaBackend(int device) : device_(device) {
  DeviceGuard guard(device);  // the handles below belong to `device`; the caller's device is restored
  // A blocking stream: it orders itself with the legacy default stream, which Tensor's copies use.
  KCPP_CUDA_CHECK(cudaStreamCreate(&stream_));
  dnn_ = std::make_unique<DnnState>(stream_);
  kernels_ = std::make_unique<KernelState>(stream_);
  phases_ = PhaseTimeline::for_device(device);
}

CudaBackend::~CudaBackend() {
  DeviceGuard guard(device_, std::nothrow);     // destroyed from any thread, e.g. the strategy's owner
  if (stream_) cudaStreamSynchronize(stream_);  // no throwing from a destructor; errors surface on the next call
  kernels_.reset();
  dnn_.reset();
  if (stream_) cudaStreamDestroy(stream_);
}

std::string CudaBackend::name() const {
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, device_);
  int cudnn = static_cast<int>(cudnnGetVersion());
  return fmt::format("gpu:{} ({}, cuDNN {}.{}, CUDA runtime stream)", device_, prop.name, cudnn / 10000,
                     cudnn / 100 % 100);
}

void CudaBackend::mark_phase(const char* phase) {
  if (!phases_) return;
  DeviceGuard guard(device_);
  phases_->mark(phase, stream_);
}

void CudaBackend::synchronize() const { KCPP_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

}  // namespace kerascpp::cuda
