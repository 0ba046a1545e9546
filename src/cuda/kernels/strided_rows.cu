// The pixel rows a strided pointwise (1x1, unpadded) convolution reads, and their adjoint
// (conv_pointwise.cpp): NHWC x [n, h, w, c] subsampled to [n, oh, ow, c] at (ho·sh, wo·sw), and
// rows [n, oh, ow, c] scattered back into a zeroed [n, h, w, c]. One thread per output element.
#include "cuda/kernels/common.cuh"

namespace kerascpp::cuda::kern {

namespace {

__global__ void subsample_rows_kernel(const float* x, std::int64_t h, std::int64_t w, std::int64_t c, std::int64_t sh,
                                      std::int64_t sw, std::int64_t oh, std::int64_t ow, std::int64_t total,
                                      float* out) {
  for (std::int64_t i = global_thread(); i < total; i += grid_threads()) {
    const std::int64_t k = i % c, p = i / c, wo = p % ow, ho = (p / ow) % oh, b = p / (ow * oh);
    out[i] = x[((b * h + ho * sh) * w + wo * sw) * c + k];
  }
}

__global__ void scatter_rows_kernel(const float* rows, std::int64_t h, std::int64_t w, std::int64_t c, std::int64_t sh,
                                    std::int64_t sw, std::int64_t oh, std::int64_t ow, std::int64_t total, float* dx) {
  for (std::int64_t i = global_thread(); i < total; i += grid_threads()) {
    const std::int64_t k = i % c, p = i / c, wi = p % w, hi = (p / w) % h, b = p / (w * h);
    const std::int64_t ho = hi / sh, wo = wi / sw;
    const bool read = hi % sh == 0 && wi % sw == 0 && ho < oh && wo < ow;
    dx[i] = read ? rows[((b * oh + ho) * ow + wo) * c + k] : 0.f;
  }
}

}  // namespace

void subsample_rows(const float* x, std::int64_t n, std::int64_t h, std::int64_t w, std::int64_t c, std::int64_t sh,
                    std::int64_t sw, std::int64_t oh, std::int64_t ow, float* out, cudaStream_t stream) {
  const std::int64_t total = n * oh * ow * c;
  if (total <= 0) return;
  subsample_rows_kernel<<<elementwise_blocks(total), kThreads, 0, stream>>>(x, h, w, c, sh, sw, oh, ow, total, out);
}

void scatter_rows(const float* rows, std::int64_t n, std::int64_t h, std::int64_t w, std::int64_t c, std::int64_t sh,
                  std::int64_t sw, std::int64_t oh, std::int64_t ow, float* dx, cudaStream_t stream) {
  const std::int64_t total = n * h * w * c;
  if (total <= 0) return;
  scatter_rows_kernel<<<elementwise_blocks(total), kThreads, 0, stream>>>(rows, h, w, c, sh, sw, oh, ow, total, dx);
}

}  // namespace kerascpp::cuda::kern
