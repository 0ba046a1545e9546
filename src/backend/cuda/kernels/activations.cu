// The activations cuDNN has no mode for, on the formulas the CPU backend shares
// (backend/activation_formulas.hpp), and the axis-wise glu and sparsemax. Grid-stride loops; the
// axis-wise kernels take one thread per fibre (class counts are small: this keeps each fibre's
// work in one thread without shared-memory scratch).
#include "backend/activation_formulas.hpp"
#include "backend/cuda/kernels/common.cuh"

namespace kerascpp::cuda::kern {

namespace {

namespace af = kerascpp::act_formula;

__global__ void activation_forward_kernel(ActivationKind k, float a, float b, float c, const float* x, float* y,
                                          std::int64_t n) {
  for (std::int64_t i = global_thread(); i < n; i += grid_threads()) y[i] = af::value(k, a, b, c, x[i]);
}

__global__ void activation_backward_kernel(ActivationKind k, float a, float b, float c, bool from_output,
                                           const float* v, const float* dy, float* dx, std::int64_t n) {
  for (std::int64_t i = global_thread(); i < n; i += grid_threads())
    dx[i] = dy[i] * af::slope(k, a, b, c, v[i], from_output);
}

__global__ void glu_forward_kernel(const float* x, float* y, std::int64_t outer, std::int64_t classes,
                                   std::int64_t inner) {
  const std::int64_t half = classes / 2, n = outer * half * inner;
  for (std::int64_t i = global_thread(); i < n; i += grid_threads()) {
    const std::int64_t o = i / (half * inner), j = (i / inner) % half, in = i % inner;
    const float av = x[(o * classes + j) * inner + in], bv = x[(o * classes + j + half) * inner + in];
    y[i] = av * af::sigmoid(bv);
  }
}

__global__ void glu_backward_kernel(const float* x, const float* dy, float* dx, std::int64_t outer,
                                    std::int64_t classes, std::int64_t inner) {
  const std::int64_t half = classes / 2, n = outer * half * inner;
  for (std::int64_t i = global_thread(); i < n; i += grid_threads()) {
    const std::int64_t o = i / (half * inner), j = (i / inner) % half, in = i % inner;
    const std::int64_t ia = (o * classes + j) * inner + in, ib = (o * classes + j + half) * inner + in;
    const float s = af::sigmoid(x[ib]), g = dy[i];
    dx[ia] = g * s;
    dx[ib] = g * x[ia] * s * (1.f - s);
  }
}

// Element i's place in the fibre sorted descending (ties by index, as a stable sort): the
// number of elements before it, and the sum of those and itself (the cumulative sum at it).
__device__ void sorted_place(const float* z, std::int64_t n, std::int64_t s, std::int64_t i, std::int64_t& rank,
                             double& cumsum) {
  const float zi = z[i * s];
  rank = 0;
  cumsum = zi;
  for (std::int64_t j = 0; j < n; ++j) {
    const float zj = z[j * s];
    if (zj > zi || (zj == zi && j < i)) {
      ++rank;
      cumsum += zj;
    }
  }
}

// Keras 3's threshold (see the CPU's sparsemax_tau in backend/cpu/activation_axis.cpp): the
// support {j : z_(j) > (c_j - 1) / j} of k elements, tau = (sum of c_j over it - 1) / k.
__device__ float sparsemax_tau(const float* z, std::int64_t n, std::int64_t s, std::int64_t& k) {
  double support_sum = 0.0;
  k = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    std::int64_t rank;
    double cumsum;
    sorted_place(z, n, s, i, rank, cumsum);
    if (z[i * s] - (cumsum - 1.0) / static_cast<double>(rank + 1) > 0.0) {
      ++k;
      support_sum += cumsum;
    }
  }
  return k > 0 ? static_cast<float>((support_sum - 1.0) / static_cast<double>(k)) : 0.f;
}

__global__ void sparsemax_forward_kernel(const float* x, float* y, std::int64_t outer, std::int64_t classes,
                                         std::int64_t inner) {
  for (std::int64_t f = global_thread(); f < outer * inner; f += grid_threads()) {
    const std::int64_t base = (f / inner) * classes * inner + f % inner;
    std::int64_t k;
    const float tau = sparsemax_tau(x + base, classes, inner, k);
    for (std::int64_t j = 0; j < classes; ++j) {
      const float d = x[base + j * inner] - tau;
      y[base + j * inner] = d < 0.f ? 0.f : d;
    }
  }
}

__global__ void sparsemax_backward_kernel(const float* x, const float* dy, float* dx, std::int64_t outer,
                                          std::int64_t classes, std::int64_t inner) {
  for (std::int64_t f = global_thread(); f < outer * inner; f += grid_threads()) {
    const std::int64_t base = (f / inner) * classes * inner + f % inner;
    const float* z = x + base;
    std::int64_t k;
    const float tau = sparsemax_tau(z, classes, inner, k);
    double active_sum = 0.0;
    for (std::int64_t j = 0; j < classes; ++j)
      if (z[j * inner] - tau > 0.f) active_sum += dy[base + j * inner];
    // d tau / d z at sorted rank r (0-based) inside the support: (k - r) / k.
    for (std::int64_t j = 0; j < classes; ++j) {
      std::int64_t rank;
      double cumsum;
      sorted_place(z, classes, inner, j, rank, cumsum);
      float g = z[j * inner] - tau > 0.f ? dy[base + j * inner] : 0.f;
      if (rank < k) g -= static_cast<float>(static_cast<double>(k - rank) / static_cast<double>(k) * active_sum);
      dx[base + j * inner] = g;
    }
  }
}

}  // namespace

void activation_forward(int kind, float a, float b, float c, const float* x, float* y, std::int64_t n,
                        cudaStream_t stream) {
  if (n <= 0) return;
  activation_forward_kernel<<<elementwise_blocks(n), kThreads, 0, stream>>>(static_cast<ActivationKind>(kind), a, b, c,
                                                                            x, y, n);
}

void activation_backward(int kind, float a, float b, float c, bool from_output, const float* v, const float* dy,
                         float* dx, std::int64_t n, cudaStream_t stream) {
  if (n <= 0) return;
  activation_backward_kernel<<<elementwise_blocks(n), kThreads, 0, stream>>>(static_cast<ActivationKind>(kind), a, b, c,
                                                                             from_output, v, dy, dx, n);
}

void glu_forward(const float* x, float* y, std::int64_t outer, std::int64_t classes, std::int64_t inner,
                 cudaStream_t stream) {
  const std::int64_t n = outer * (classes / 2) * inner;
  if (n <= 0) return;
  glu_forward_kernel<<<elementwise_blocks(n), kThreads, 0, stream>>>(x, y, outer, classes, inner);
}

void glu_backward(const float* x, const float* dy, float* dx, std::int64_t outer, std::int64_t classes,
                  std::int64_t inner, cudaStream_t stream) {
  const std::int64_t n = outer * (classes / 2) * inner;
  if (n <= 0) return;
  glu_backward_kernel<<<elementwise_blocks(n), kThreads, 0, stream>>>(x, dy, dx, outer, classes, inner);
}

void sparsemax_forward(const float* x, float* y, std::int64_t outer, std::int64_t classes, std::int64_t inner,
                       cudaStream_t stream) {
  if (outer * inner * classes <= 0) return;
  sparsemax_forward_kernel<<<elementwise_blocks(outer * inner), kThreads, 0, stream>>>(x, y, outer, classes, inner);
}

void sparsemax_backward(const float* x, const float* dy, float* dx, std::int64_t outer, std::int64_t classes,
                        std::int64_t inner, cudaStream_t stream) {
  if (outer * inner * classes <= 0) return;
  sparsemax_backward_kernel<<<elementwise_blocks(outer * inner), kThreads, 0, stream>>>(x, dy, dx, outer, classes,
                                                                                        inner);
}

}  // namespace kerascpp::cuda::kern
