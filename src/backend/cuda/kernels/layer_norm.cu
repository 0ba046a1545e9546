// Layer normalization kernels: one block per row (grid-strided over rows) for the statistics,
// y and dx, with the row sums in double through block_sum's fixed tree; one thread per column
// for dgamma/dbeta, summing the rows in index order. No float atomics: deterministic.
#include "backend/cuda/kernels/common.cuh"

namespace kerascpp::cuda::kern {

namespace {

unsigned row_blocks(std::int64_t rows) { return static_cast<unsigned>(rows < 65535 ? rows : 65535); }

__global__ void layer_norm_forward_kernel(const float* x, const float* gamma, const float* beta, float eps,
                                          std::int64_t rows, std::int64_t cols, float* y, float* mean, float* rstd) {
  __shared__ double shared[kThreads];
  for (std::int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* xr = x + r * cols;
    double s = 0.0;
    for (std::int64_t c = threadIdx.x; c < cols; c += blockDim.x) s += xr[c];
    const double mu = block_sum(s, shared) / static_cast<double>(cols);
    double ss = 0.0;
    for (std::int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
      const double d = xr[c] - mu;
      ss += d * d;
    }
    const double var = block_sum(ss, shared) / static_cast<double>(cols);
    const float m = static_cast<float>(mu);
    const float inv = static_cast<float>(1.0 / sqrt(var + static_cast<double>(eps)));
    if (threadIdx.x == 0) {
      mean[r] = m;
      rstd[r] = inv;
    }
    float* yr = y + r * cols;
    for (std::int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
      float v = (xr[c] - m) * inv;
      if (gamma) v *= gamma[c];
      if (beta) v += beta[c];
      yr[c] = v;
    }
  }
}

__global__ void layer_norm_backward_dx_kernel(const float* dy, const float* x, const float* gamma, const float* mean,
                                              const float* rstd, std::int64_t rows, std::int64_t cols, float* dx) {
  __shared__ double shared[kThreads];
  for (std::int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* dyr = dy + r * cols;
    const float* xr = x + r * cols;
    const float m = mean[r], inv = rstd[r];
    double sg = 0.0, sgx = 0.0;
    for (std::int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
      const double g = gamma ? static_cast<double>(dyr[c]) * gamma[c] : dyr[c];
      sg += g;
      sgx += g * static_cast<double>((xr[c] - m) * inv);
    }
    const float mg = static_cast<float>(block_sum(sg, shared) / static_cast<double>(cols));
    const float mgx = static_cast<float>(block_sum(sgx, shared) / static_cast<double>(cols));
    float* dxr = dx + r * cols;
    for (std::int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
      const float g = gamma ? dyr[c] * gamma[c] : dyr[c];
      const float xhat = (xr[c] - m) * inv;
      dxr[c] = inv * (g - mg - xhat * mgx);
    }
  }
}

__global__ void layer_norm_param_grads_kernel(const float* dy, const float* x, const float* mean, const float* rstd,
                                              std::int64_t rows, std::int64_t cols, float* dgamma, float* dbeta) {
  for (std::int64_t c = global_thread(); c < cols; c += grid_threads()) {
    double gx = 0.0, gd = 0.0;
    for (std::int64_t r = 0; r < rows; ++r) {
      const float d = dy[r * cols + c];
      gx += static_cast<double>(d) * static_cast<double>((x[r * cols + c] - mean[r]) * rstd[r]);
      gd += d;
    }
    if (dgamma) dgamma[c] = static_cast<float>(gx);
    if (dbeta) dbeta[c] = static_cast<float>(gd);
  }
}

}  // namespace

void layer_norm_forward(const float* x, const float* gamma, const float* beta, float eps, std::int64_t rows,
                        std::int64_t cols, float* y, float* mean, float* rstd, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  layer_norm_forward_kernel<<<row_blocks(rows), kThreads, 0, stream>>>(x, gamma, beta, eps, rows, cols, y, mean, rstd);
}

void layer_norm_backward(const float* dy, const float* x, const float* gamma, const float* mean, const float* rstd,
                         std::int64_t rows, std::int64_t cols, float* dx, float* dgamma, float* dbeta,
                         cudaStream_t stream) {
  if (cols <= 0) return;
  if (rows > 0)
    layer_norm_backward_dx_kernel<<<row_blocks(rows), kThreads, 0, stream>>>(dy, x, gamma, mean, rstd, rows, cols, dx);
  if (dgamma || dbeta)
    layer_norm_param_grads_kernel<<<elementwise_blocks(cols), kThreads, 0, stream>>>(dy, x, mean, rstd, rows, cols,
                                                                                     dgamma, dbeta);
}

}  // namespace kerascpp::cuda::kern
