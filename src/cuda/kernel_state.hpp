// State of the hand-written-kernel half of CudaBackend (see cuda_backend.hpp).
#pragma once
#include "cuda/cuda_check.hpp"

namespace kerascpp::cuda {

struct KernelState {
  explicit KernelState(cudaStream_t stream);
  ~KernelState();
  KernelState(const KernelState&) = delete;
  KernelState& operator=(const KernelState&) = delete;
};

}  // namespace kerascpp::cuda
