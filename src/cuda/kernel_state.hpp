// State of the hand-written-kernel half of CudaBackend (see cuda_backend.hpp): a growable
// device scratch for reduction partials, and the small status block (hit counts, label-range
// flag, double results) with its pinned host mirror for the ops that return a value.
#pragma once
#include <cstddef>

#include "cuda/cuda_check.hpp"
#include "cuda/kernels/kernels.hpp"

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

  cudaStream_t stream;
  int device = 0;

 private:
  void* scratch_ = nullptr;
  std::size_t scratch_bytes_ = 0;
  kern::Status* status_ = nullptr;       // device
  kern::Status* host_status_ = nullptr;  // pinned
};

}  // namespace kerascpp::cuda
