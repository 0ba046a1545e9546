#include "backend/cuda/kernel_state.hpp"

#include "backend/cuda/device_runtime.hpp"
#include "check.hpp"
#include "kerascpp/error.hpp"

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
  release_slots();
  if (results_ready_) cudaEventDestroy(results_ready_);
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

void KernelState::release_slots() {
  if (slots_) device_release(device, slots_, slot_capacity_ * sizeof(kern::Status));
  if (host_slots_) pinned_release(host_slots_, slot_capacity_ * sizeof(kern::Status));
  slots_ = host_slots_ = nullptr;
  slot_capacity_ = 0;
}

kern::Status* KernelState::result_slots(std::size_t count) {
  ++generation_;
  if (count == 0) count = 1;
  if (count > slot_capacity_) {
    // Work still queued may write the old blocks: wait for it before handing them back.
    if (slots_) KCPP_CUDA_CHECK(cudaStreamSynchronize(stream));
    release_slots();
    const std::size_t grown = count < 64 ? 64 : count;
    slots_ = static_cast<kern::Status*>(device_allocate(device, grown * sizeof(kern::Status)));
    slot_capacity_ = grown;
    host_slots_ = static_cast<kern::Status*>(pinned_allocate(grown * sizeof(kern::Status)));
  }
  if (!results_ready_) KCPP_CUDA_CHECK(cudaEventCreateWithFlags(&results_ready_, cudaEventDisableTiming));
  slot_count_ = count;
  return slots_;
}

void KernelState::queue_results() {
  KCPP_CUDA_CHECK(
      cudaMemcpyAsync(host_slots_, slots_, slot_count_ * sizeof(kern::Status), cudaMemcpyDeviceToHost, stream));
  KCPP_CUDA_CHECK(cudaEventRecord(results_ready_, stream));
}

const kern::Status* KernelState::wait_results(std::uint64_t generation) {
  KERASCPP_CHECK_STATE(generation == generation_,
                       "a GPU's weight penalties were read after the next step's were queued (kerascpp bug)");
  KCPP_CUDA_CHECK(cudaEventSynchronize(results_ready_));
  return host_slots_;
}

}  // namespace kerascpp::cuda
