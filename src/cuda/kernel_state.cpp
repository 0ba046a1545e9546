#include "cuda/kernel_state.hpp"

#include "cuda/device_runtime.hpp"

namespace kerascpp::cuda {

KernelState::KernelState(cudaStream_t s) : stream(s) {
  KCPP_CUDA_CHECK(cudaGetDevice(&device));
  status_ = static_cast<kern::Status*>(device_allocate(device, sizeof(kern::Status)));
  try {
    host_status_ = static_cast<kern::Status*>(pinned_allocate(sizeof(kern::Status)));
    reset_status();
  } catch (...) {
    if (host_status_) pinned_release(host_status_, sizeof(kern::Status));
    device_release(device, status_, sizeof(kern::Status));
    throw;
  }
}

KernelState::~KernelState() {
  // The backend synchronised its stream before destroying this state; nothing is in flight.
  if (scratch_) device_release(device, scratch_, scratch_bytes_);
  device_release(device, status_, sizeof(kern::Status));
  pinned_release(host_status_, sizeof(kern::Status));
}

void* KernelState::scratch(std::size_t bytes) {
  if (bytes == 0) bytes = 1;
  if (bytes > scratch_bytes_) {
    std::size_t grown = scratch_bytes_ * 2 > bytes ? scratch_bytes_ * 2 : bytes;
    if (grown < 4096) grown = 4096;
    if (scratch_) {
      device_release(device, scratch_, scratch_bytes_);
      scratch_ = nullptr;
      scratch_bytes_ = 0;
    }
    scratch_ = device_allocate(device, grown);
    scratch_bytes_ = grown;
  }
  return scratch_;
}

void KernelState::reset_status() {
  kern::reset_status(status_, stream);
  KCPP_CUDA_CHECK(cudaGetLastError());
}

const kern::Status& KernelState::fetch_status() {
  KCPP_CUDA_CHECK(cudaMemcpyAsync(host_status_, status_, sizeof(kern::Status), cudaMemcpyDeviceToHost, stream));
  KCPP_CUDA_CHECK(cudaStreamSynchronize(stream));
  return *host_status_;
}

}  // namespace kerascpp::cuda
