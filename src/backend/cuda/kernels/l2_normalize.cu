// Rows scaled to unit L2 norm (Backend::l2_normalize_rows): one block per row (grid-strided over
// rows), the row's sums in double through block_sum's fixed tree, so the result is the same bits
// run to run. The factor's clamp is the CPU backend's (backend/l2_normalize_rows.hpp).
#include "backend/cuda/kernels/common.cuh"
#include "backend/l2_normalize_rows.hpp"

namespace kerascpp::cuda::kern {

namespace {

unsigned row_blocks(std::int64_t rows) { return static_cast<unsigned>(rows < 65535 ? rows : 65535); }

__global__ void l2_normalize_rows_kernel(const float* x, std::int64_t rows, std::int64_t cols, float* y, float* inv) {
  __shared__ double shared[kThreads];
  for (std::int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* xr = x + r * cols;
    double s = 0.0;
    for (std::int64_t c = threadIdx.x; c < cols; c += blockDim.x) s += static_cast<double>(xr[c]) * xr[c];
    const float f = op_shapes::l2_normalize_factor(static_cast<float>(block_sum(s, shared)));
    if (threadIdx.x == 0) inv[r] = f;
    float* yr = y + r * cols;
    for (std::int64_t c = threadIdx.x; c < cols; c += blockDim.x) yr[c] = xr[c] * f;
  }
}

__global__ void l2_normalize_rows_backward_kernel(const float* y, const float* dy, const float* inv, std::int64_t rows,
                                                  std::int64_t cols, float* dx) {
  __shared__ double shared[kThreads];
  for (std::int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* yr = y + r * cols;
    const float* dyr = dy + r * cols;
    double s = 0.0;
    for (std::int64_t c = threadIdx.x; c < cols; c += blockDim.x) s += static_cast<double>(dyr[c]) * yr[c];
    const double dot = block_sum(s, shared);
    const float f = inv[r];
    const float d = op_shapes::l2_normalize_clamped(f) ? 0.f : static_cast<float>(dot);
    float* dxr = dx + r * cols;
    for (std::int64_t c = threadIdx.x; c < cols; c += blockDim.x) dxr[c] = f * (dyr[c] - yr[c] * d);
  }
}

}  // namespace

void l2_normalize_rows(const float* x, std::int64_t rows, std::int64_t cols, float* y, float* inv,
                       cudaStream_t stream) {
  if (rows <= 0) return;
  l2_normalize_rows_kernel<<<row_blocks(rows), kThreads, 0, stream>>>(x, rows, cols, y, inv);
}

void l2_normalize_rows_backward(const float* y, const float* dy, const float* inv, std::int64_t rows, std::int64_t cols,
                                float* dx, cudaStream_t stream) {
  if (rows <= 0) return;
  l2_normalize_rows_backward_kernel<<<row_blocks(rows), kThreads, 0, stream>>>(y, dy, inv, rows, cols, dx);
}

}  // namespace kerascpp::cuda::kern
