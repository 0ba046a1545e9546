// Axis permutation and attention masking. One thread per output element in a grid-stride loop.
#include "backend/cuda/kernels/common.cuh"

namespace kerascpp::cuda::kern {

namespace {

__global__ void transpose_kernel(const float* x, float* y, std::int64_t n, Permutation p) {
  for (std::int64_t i = global_thread(); i < n; i += grid_threads()) {
    // Decompose the output index (row-major over out_dims) and gather from the input strides.
    std::int64_t rest = i, src = 0;
    for (int a = p.rank - 1; a >= 0; --a) {
      const std::int64_t coord = rest % p.out_dims[a];
      rest /= p.out_dims[a];
      src += coord * p.in_strides[a];
    }
    y[i] = x[src];
  }
}

__global__ void masked_fill_kernel(float* x, const std::uint8_t* mask, std::int64_t n, std::int64_t G, std::int64_t L,
                                   float value) {
  for (std::int64_t i = global_thread(); i < n; i += grid_threads()) {
    const std::int64_t b = i / (G * L), l = i % L;
    if (mask[b * L + l] == 0) x[i] = value;
  }
}

__global__ void mask_and_kernel(const std::uint8_t* a, const std::uint8_t* b, std::uint8_t* out, std::int64_t n) {
  for (std::int64_t i = global_thread(); i < n; i += grid_threads()) out[i] = (a[i] != 0 && b[i] != 0) ? 1 : 0;
}

// One thread per row: Masking's rows are short (a step's features).
__global__ void mask_not_equal_kernel(const float* x, float value, std::uint8_t* mask, std::int64_t rows,
                                      std::int64_t K) {
  for (std::int64_t r = global_thread(); r < rows; r += grid_threads()) {
    bool any = false;
    for (std::int64_t k = 0; k < K && !any; ++k) any = !(x[r * K + k] == value);
    mask[r] = any ? 1 : 0;
  }
}

__global__ void attention_mask_kernel(const std::uint8_t* q, const std::uint8_t* v, const std::uint8_t* e, bool causal,
                                      std::uint8_t* out, std::int64_t n, std::int64_t T, std::int64_t S) {
  for (std::int64_t i = global_thread(); i < n; i += grid_threads()) {
    const std::int64_t s = i % S, t = (i / S) % T, b = i / (T * S);
    const bool keep = (!q || q[b * T + t]) && (!v || v[b * S + s]) && (!e || e[i]) && (!causal || s <= t);
    out[i] = keep ? 1 : 0;
  }
}

}  // namespace

void attention_mask(const std::uint8_t* q, const std::uint8_t* v, const std::uint8_t* e, bool causal, std::uint8_t* out,
                    std::int64_t B, std::int64_t T, std::int64_t S, cudaStream_t stream) {
  const std::int64_t n = B * T * S;
  if (n <= 0) return;
  attention_mask_kernel<<<elementwise_blocks(n), kThreads, 0, stream>>>(q, v, e, causal, out, n, T, S);
}

void mask_and(const std::uint8_t* a, const std::uint8_t* b, std::uint8_t* out, std::int64_t n, cudaStream_t stream) {
  if (n <= 0) return;
  mask_and_kernel<<<elementwise_blocks(n), kThreads, 0, stream>>>(a, b, out, n);
}

void mask_not_equal(const float* x, float value, std::uint8_t* mask, std::int64_t rows, std::int64_t K,
                    cudaStream_t stream) {
  if (rows <= 0) return;
  mask_not_equal_kernel<<<elementwise_blocks(rows), kThreads, 0, stream>>>(x, value, mask, rows, K);
}

void transpose(const float* x, float* y, std::int64_t n, const Permutation& p, cudaStream_t stream) {
  if (n <= 0) return;
  transpose_kernel<<<elementwise_blocks(n), kThreads, 0, stream>>>(x, y, n, p);
}

void masked_fill(float* x, const std::uint8_t* mask, std::int64_t B, std::int64_t G, std::int64_t L, float value,
                 cudaStream_t stream) {
  const std::int64_t n = B * G * L;
  if (n <= 0) return;
  masked_fill_kernel<<<elementwise_blocks(n), kThreads, 0, stream>>>(x, mask, n, G, L, value);
}

}  // namespace kerascpp::cuda::kern
