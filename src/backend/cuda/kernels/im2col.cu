// The patch matrix of a convolution computed as a matrix product (conv_gemm.cpp), and its
// adjoint; the index arithmetic is im2col_index.hpp's. col2im writes every element of dx as the
// sum of the col entries that read it, gathered in a fixed order (no atomics: deterministic).
// Blocks walk rows (grid y) and threads the row's columns (im2col) or channels (col2im). With
// few channels col2im leaves most of a warp idle; a first layer's data gradient, where channels
// are few, is never asked for.
#include "backend/cuda/kernels/common.cuh"

namespace kerascpp::cuda::kern {

namespace {

constexpr std::int64_t kMaxGridY = 65535;

// The grid's x extent covers a row (row_grid): each thread has one column (im2col) or channel
// (col2im) and walks the rows given to its block.
__global__ void im2col_kernel(const float* x, ConvGeometry g, std::int64_t rows, int K, float* col) {
  const std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k >= K) return;
  for (std::int64_t m = blockIdx.y; m < rows; m += gridDim.y) {
    const std::int64_t src = patch_source(g, patch_row(g, m), static_cast<int>(k));
    col[m * K + k] = src >= 0 ? x[src] : 0.f;
  }
}

__global__ void col2im_kernel(const float* col, ConvGeometry g, std::int64_t pixels, int K, float* dx) {
  const std::int64_t ch = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (ch >= g.c) return;
  for (std::int64_t p = blockIdx.y; p < pixels; p += gridDim.y) {
    float sum = 0.f;
    for_each_patch_reading(g, p, [&](std::int64_t m, std::int64_t tap) { sum += col[m * K + tap * g.c + ch]; });
    dx[p * g.c + ch] = sum;
  }
}

// Threads per block for rows of `width` elements: the width rounded up to a warp, at most kThreads.
unsigned row_threads(std::int64_t width) {
  const std::int64_t warps = (width + 31) / 32;
  return static_cast<unsigned>(warps * 32 < kThreads ? warps * 32 : kThreads);
}

dim3 row_grid(std::int64_t rows, std::int64_t width, unsigned threads) {
  return dim3(static_cast<unsigned>((width + threads - 1) / threads),
              static_cast<unsigned>(rows < kMaxGridY ? rows : kMaxGridY));
}

}  // namespace

void im2col(const float* x, const ConvGeometry& g, float* col, cudaStream_t stream) {
  const std::int64_t rows = g.n * g.oh * g.ow, K = g.kh * g.kw * g.c;
  if (rows <= 0 || K <= 0) return;
  const unsigned threads = row_threads(K);
  im2col_kernel<<<row_grid(rows, K, threads), threads, 0, stream>>>(x, g, rows, static_cast<int>(K), col);
}

void col2im(const float* col, const ConvGeometry& g, float* dx, cudaStream_t stream) {
  const std::int64_t pixels = g.n * g.h * g.w, K = g.kh * g.kw * g.c;
  if (pixels <= 0 || g.c <= 0) return;
  const unsigned threads = row_threads(g.c);
  col2im_kernel<<<row_grid(pixels, g.c, threads), threads, 0, stream>>>(col, g, pixels, static_cast<int>(K), dx);
}

}  // namespace kerascpp::cuda::kern
