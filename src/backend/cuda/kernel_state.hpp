// State of the hand-written-kernel half of CudaBackend (see cuda_backend.hpp): a growable
// device scratch for reduction partials, and the small status block (hit counts, label-range
// flag, double results) with its pinned host mirror for the ops that return a value.
#pragma once
#include <cstddef>
#include <cstdint>

#include "backend/cuda/cuda_check.hpp"
#include "backend/cuda/kernels/kernels.hpp"

namespace kerascpp::cuda {

struct KernelState {
  explicit KernelState(cudaStream_t stream);  // on the current device (the backend's)
  ~KernelState();
  KernelState(const KernelState&) = delete;
  KernelState& operator=(const KernelState&) = delete;

  // Device scratch of at least `bytes` (256-byte aligned), valid until the next call. Growing
  // hands the old block back to the caching allocator: work already queued on the stream that
  // uses it runs before any later user of that block (stream order).
  void* scratch(std::size_t bytes);
  double* scratch_doubles(std::size_t count) { return static_cast<double*>(scratch(count * sizeof(double))); }

  // The device status block, and reset_status() queued on the stream.
  kern::Status* status() { return status_; }
  void reset_status();
  // Copies the status block to pinned memory and waits for the stream: the one synchronisation
  // of an op whose result the host needs.
  const kern::Status& fetch_status();

  // `count` device status blocks for results read together (weight_penalties), valid until the
  // next call; queue_results() copies them to a pinned mirror and marks the stream there;
  // wait_results() waits for that mark only (not for work queued after it) and returns the
  // mirror. Each call to result_slots starts a new generation: a reader of an older one is a bug.
  kern::Status* result_slots(std::size_t count);
  void queue_results();
  const kern::Status* wait_results(std::uint64_t generation);
  std::uint64_t results_generation() const { return generation_; }

  cudaStream_t stream;
  int device = 0;

 private:
  void* scratch_ = nullptr;
  std::size_t scratch_bytes_ = 0;
  kern::Status* status_ = nullptr;       // device
  kern::Status* host_status_ = nullptr;  // pinned
  kern::Status* slots_ = nullptr;        // device, slot_capacity_ blocks
  kern::Status* host_slots_ = nullptr;   // pinned mirror
  std::size_t slot_capacity_ = 0, slot_count_ = 0;
  cudaEvent_t results_ready_ = nullptr;
  std::uint64_t generation_ = 0;
  void release_slots();
};

}  // namespace kerascpp::cuda
