// Device helpers shared by the kernels/*.cu files (CUDA only, no kerascpp headers).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "backend/cuda/kernels/kernels.hpp"

namespace kerascpp::cuda::kern {

constexpr int kThreads = 256;  // threads per block of every 1-D kernel
constexpr int kWarpsPerBlock = kThreads / 32;
constexpr unsigned kFullMask = 0xffffffffu;

// Blocks for a grid-stride elementwise loop over n items (n > 0). Elementwise results do not
// depend on the grid, so the cap only bounds the launch.
inline unsigned elementwise_blocks(std::int64_t n) {
  const std::int64_t cap = 8192;
  std::int64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < cap ? blocks : cap);
}

// Grid-stride loop index helpers (64-bit: tensors may exceed 2^31 elements).
__device__ __forceinline__ std::int64_t global_thread() {
  return static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ std::int64_t grid_threads() { return static_cast<std::int64_t>(gridDim.x) * blockDim.x; }

// Butterfly sums: every lane ends with the same, bit-identical value (each pairwise add is
// commutative), and the order is fixed, so results are reproducible.
__device__ __forceinline__ double warp_sum(double v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(kFullMask, v, o);
  return v;
}
__device__ __forceinline__ unsigned long long warp_sum_u64(unsigned long long v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(kFullMask, v, o);
  return v;
}
__device__ __forceinline__ float warp_max(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(kFullMask, v, o));
  return v;
}

// Sum of one double per thread over a kThreads block, in a fixed tree order. Every thread must
// call it (it synchronises the block); every thread gets the result. `shared` holds kThreads
// doubles and may be reused by the next call.
__device__ __forceinline__ double block_sum(double v, double* shared) {
  const int t = threadIdx.x;
  __syncthreads();  // a previous call's readers of shared[0] are done
  shared[t] = v;
  __syncthreads();
  for (int stride = kThreads / 2; stride > 0; stride >>= 1) {
    if (t < stride) shared[t] += shared[t + stride];
    __syncthreads();
  }
  return shared[0];
}

// Reads label i of an int32/int64/uint8 label tensor.
__device__ __forceinline__ std::int64_t load_label(const void* labels, int type, std::int64_t i) {
  switch (type) {
    case kLabelInt32:
      return static_cast<const std::int32_t*>(labels)[i];
    case kLabelInt64:
      return static_cast<const std::int64_t*>(labels)[i];
    default:
      return static_cast<const std::uint8_t*>(labels)[i];
  }
}

}  // namespace kerascpp::cuda::kern
