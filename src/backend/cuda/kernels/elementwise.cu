// Elementwise kernels: n-ary add, scale, multiply, relu backward and dropout (grid-stride loops).
#include "backend/cuda/kernels/common.cuh"
#include "backend/normal_draws.hpp"

namespace kerascpp::cuda::kern {

namespace {

struct AddInputs {
  const float* x[kMaxAddInputs];
};

__global__ void add_n_kernel(AddInputs in, int count, float* y, std::int64_t n) {
  for (std::int64_t i = global_thread(); i < n; i += grid_threads()) {
    float s = in.x[0][i];
#pragma unroll
    for (int k = 1; k < kMaxAddInputs; ++k)  // static indices keep the pointers in registers
      if (k < count) s += in.x[k][i];
    y[i] = s;
  }
}

__global__ void fill_kernel(float* x, float value, std::int64_t n) {
  for (std::int64_t i = global_thread(); i < n; i += grid_threads()) x[i] = value;
}

__global__ void scale_kernel(float* x, float factor, std::int64_t n) {
  for (std::int64_t i = global_thread(); i < n; i += grid_threads()) x[i] *= factor;
}

__global__ void multiply_kernel(const float* a, const float* b, float* y, std::int64_t n) {
  for (std::int64_t i = global_thread(); i < n; i += grid_threads()) y[i] = a[i] * b[i];
}

__global__ void scale_rows_kernel(float* x, const float* w, std::int64_t cols, std::int64_t n) {
  for (std::int64_t i = global_thread(); i < n; i += grid_threads()) x[i] *= w[i / cols];
}

// dy - dy: +0 for finite dy, NaN for NaN/Inf (TensorFlow's dy * 0 without its -0).
__global__ void relu_backward_kernel(const float* y, const float* dy, float* dx, std::int64_t n) {
  for (std::int64_t i = global_thread(); i < n; i += grid_threads()) {
    const float g = dy[i];
    dx[i] = y[i] > 0.f ? g : __fsub_rn(g, g);  // __fsub_rn: never contracted or folded
  }
}

// The CPU backend's SplitMix64 finaliser (backend/cpu/dropout.cpp), bit for bit.
__device__ __forceinline__ std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

__global__ void random_normal_kernel(float* y, std::int64_t n, std::uint64_t base, float mean, float stddev) {
  for (std::int64_t i = global_thread(); i < n; i += grid_threads())
    y[i] = mean + stddev * op_shapes::normal_draw(base, i);
}

__global__ void dropout_kernel(const float* x, float* y, float* mask, std::int64_t n, std::uint64_t base,
                               std::uint64_t threshold, float keep_scale) {
  for (std::int64_t i = global_thread(); i < n; i += grid_threads()) {
    const std::uint64_t bits = mix64(base + static_cast<std::uint64_t>(i) * 0x9e3779b97f4a7c15ULL) >> 40;
    const float m = bits >= threshold ? keep_scale : 0.f;
    const float xi = x[i];  // read before the writes: y may alias x
    mask[i] = m;
    y[i] = xi * m;
  }
}

}  // namespace

void add_n(const float* const* xs, int count, float* y, std::int64_t n, cudaStream_t stream) {
  if (n <= 0 || count <= 0) return;
  AddInputs in{};
  for (int k = 0; k < count && k < kMaxAddInputs; ++k) in.x[k] = xs[k];
  add_n_kernel<<<elementwise_blocks(n), kThreads, 0, stream>>>(in, count < kMaxAddInputs ? count : kMaxAddInputs, y, n);
}

void fill(float* x, float value, std::int64_t n, cudaStream_t stream) {
  if (n <= 0) return;
  fill_kernel<<<elementwise_blocks(n), kThreads, 0, stream>>>(x, value, n);
}

void scale(float* x, float factor, std::int64_t n, cudaStream_t stream) {
  if (n <= 0) return;
  scale_kernel<<<elementwise_blocks(n), kThreads, 0, stream>>>(x, factor, n);
}

void multiply(const float* a, const float* b, float* y, std::int64_t n, cudaStream_t stream) {
  if (n <= 0) return;
  multiply_kernel<<<elementwise_blocks(n), kThreads, 0, stream>>>(a, b, y, n);
}

void scale_rows(float* x, const float* w, std::int64_t rows, std::int64_t cols, cudaStream_t stream) {
  const std::int64_t n = rows * cols;
  if (n <= 0) return;
  scale_rows_kernel<<<elementwise_blocks(n), kThreads, 0, stream>>>(x, w, cols, n);
}

void relu_backward(const float* y, const float* dy, float* dx, std::int64_t n, cudaStream_t stream) {
  if (n <= 0) return;
  relu_backward_kernel<<<elementwise_blocks(n), kThreads, 0, stream>>>(y, dy, dx, n);
}

void random_normal(float* y, std::int64_t n, std::uint64_t seed, float mean, float stddev, cudaStream_t stream) {
  if (n <= 0) return;
  random_normal_kernel<<<elementwise_blocks(n), kThreads, 0, stream>>>(y, n, op_shapes::normal_base(seed), mean,
                                                                       stddev);
}

void dropout(const float* x, float* y, float* mask, std::int64_t n, std::uint64_t base, std::uint64_t threshold,
             float keep_scale, cudaStream_t stream) {
  if (n <= 0) return;
  dropout_kernel<<<elementwise_blocks(n), kThreads, 0, stream>>>(x, y, mask, n, base, threshold, keep_scale);
}

}  // namespace kerascpp::cuda::kern
