// LossScaleOptimizer's overflow check: Inf/NaN counted with integer atomics (exact, so the
// answer does not depend on the grid), one atomic per block.
#include "backend/cuda/kernels/common.cuh"

namespace kerascpp::cuda::kern {

namespace {

__global__ void count_non_finite_kernel(const float* x, std::int64_t n, Status* status) {
  __shared__ unsigned long long warp_counts[kWarpsPerBlock];
  unsigned long long count = 0;
  // On the bits (exponent all ones), so no compiler flag can fold the test away.
  for (std::int64_t i = global_thread(); i < n; i += grid_threads())
    count += (__float_as_uint(x[i]) & 0x7f800000u) == 0x7f800000u ? 1ull : 0ull;
  count = warp_sum_u64(count);
  if ((threadIdx.x & 31) == 0) warp_counts[threadIdx.x / 32] = count;
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned long long total = 0;
    for (int w = 0; w < kWarpsPerBlock; ++w) total += warp_counts[w];
    if (total != 0) atomicAdd(&status->count, total);
  }
}

}  // namespace

void count_non_finite(const float* x, std::int64_t n, Status* status, cudaStream_t stream) {
  if (n <= 0) return;
  count_non_finite_kernel<<<elementwise_blocks(n), kThreads, 0, stream>>>(x, n, status);
}

}  // namespace kerascpp::cuda::kern
