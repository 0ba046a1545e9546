// Bilinear upsampling along one axis (UpSampling2D(bilinear)), the same taps as the CPU
// (backend/linear_resize_taps.hpp). One thread per output element; the backward gathers over
// the outputs that read each input (no atomics, a fixed summation order: deterministic).
#include "backend/cuda/kernels/common.cuh"
#include "backend/linear_resize_taps.hpp"

namespace kerascpp::cuda::kern {

namespace {

__global__ void upsample_linear_kernel(const float* x, float* y, std::int64_t total, std::int64_t n, std::int64_t inner,
                                       std::int64_t times) {
  const std::int64_t m = n * times;
  for (std::int64_t idx = global_thread(); idx < total; idx += grid_threads()) {
    const std::int64_t k = idx % inner, o = (idx / inner) % m, b = idx / (inner * m);
    const linear_resize::Taps t = linear_resize::taps(o, n, times);
    y[idx] = t.w_lo * x[(b * n + t.lo) * inner + k] + t.w_hi * x[(b * n + t.hi) * inner + k];
  }
}

__global__ void upsample_linear_backward_kernel(const float* dy, float* dx, std::int64_t total, std::int64_t n,
                                                std::int64_t inner, std::int64_t times) {
  const std::int64_t m = n * times;
  for (std::int64_t idx = global_thread(); idx < total; idx += grid_threads()) {
    const std::int64_t k = idx % inner, i = (idx / inner) % n, b = idx / (inner * n);
    float sum = 0.f;
    for (std::int64_t o = linear_resize::first_output(i, times); o < linear_resize::last_output(i, n, times); ++o) {
      const float w = linear_resize::weight(o, i, n, times);
      if (w != 0.f) sum += w * dy[(b * m + o) * inner + k];
    }
    dx[idx] = sum;
  }
}

}  // namespace

void upsample_linear(const float* x, float* y, std::int64_t outer, std::int64_t n, std::int64_t inner,
                     std::int64_t times, cudaStream_t stream) {
  const std::int64_t total = outer * n * times * inner;
  if (total <= 0) return;
  upsample_linear_kernel<<<elementwise_blocks(total), kThreads, 0, stream>>>(x, y, total, n, inner, times);
}

void upsample_linear_backward(const float* dy, float* dx, std::int64_t outer, std::int64_t n, std::int64_t inner,
                              std::int64_t times, cudaStream_t stream) {
  const std::int64_t total = outer * n * inner;
  if (total <= 0) return;
  upsample_linear_backward_kernel<<<elementwise_blocks(total), kThreads, 0, stream>>>(dy, dx, total, n, inner, times);
}

}  // namespace kerascpp::cuda::kern
