// Regularizer gradients and the MaxNorm constraint. Round-to-nearest intrinsics keep nvcc from
// contracting into FMAs, so the results are the CPU backend's bits (backend/cpu/weight_penalties.cpp).
#include "backend/cuda/kernels/common.cuh"

namespace kerascpp::cuda::kern {

namespace {

__global__ void weight_penalty_grad_kernel(const float* w, float* grad, std::int64_t n, float l1, float two_l2,
                                           float grad_scale) {
  for (std::int64_t i = global_thread(); i < n; i += grid_threads()) {
    const float v = w[i];
    const float sign = v > 0.f ? 1.f : (v < 0.f ? -1.f : 0.f);
    const float g = __fadd_rn(__fmul_rn(l1, sign), __fmul_rn(two_l2, v));
    grad[i] = __fadd_rn(grad[i], __fmul_rn(grad_scale, g));
  }
}

// One thread per column: the rows of a column are read with stride `cols`, so neighbouring
// threads read neighbouring addresses (coalesced). Kernels are small; this runs once per step.
__global__ void max_norm_kernel(float* w, std::int64_t rows, std::int64_t cols, float max_value) {
  for (std::int64_t c = global_thread(); c < cols; c += grid_threads()) {
    double sq = 0.0;
    for (std::int64_t r = 0; r < rows; ++r) {
      const double v = w[r * cols + c];
      sq += v * v;
    }
    const float norm = static_cast<float>(sqrt(sq));
    const float factor = __fdiv_rn(fminf(fmaxf(norm, 0.f), max_value), __fadd_rn(1e-7f, norm));
    for (std::int64_t r = 0; r < rows; ++r) w[r * cols + c] = __fmul_rn(w[r * cols + c], factor);
  }
}

}  // namespace

void weight_penalty_grad(const float* w, float* grad, std::int64_t n, float l1, float l2, float grad_scale,
                         cudaStream_t stream) {
  if (n <= 0) return;
  weight_penalty_grad_kernel<<<elementwise_blocks(n), kThreads, 0, stream>>>(w, grad, n, l1, 2.f * l2, grad_scale);
}

void max_norm(float* w, std::int64_t rows, std::int64_t cols, float max_value, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  max_norm_kernel<<<elementwise_blocks(cols), kThreads, 0, stream>>>(w, rows, cols, max_value);
}

}  // namespace kerascpp::cuda::kern
