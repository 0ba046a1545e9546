// Per-channel kernels of synchronized batch normalization and the moving statistics: the
// packed (count, mean, var) slots of pack_moments and their two combinations, the moving
// average, and the small finish of batchnorm_backward_reduce. Each walks the replicas' slots
// in replica order in one thread per channel, so a result is the same bits run to run and
// matches the CPU backend's arithmetic (same operations, no FMA contraction).
#include "backend/cuda/kernels/common.cuh"

namespace kerascpp::cuda::kern {

namespace {

unsigned channel_blocks(std::int64_t n) { return static_cast<unsigned>((n + kThreads - 1) / kThreads); }

__global__ void pack_moments_kernel(const float* mean, const float* var, float count, std::int64_t cols, int replica,
                                    std::int64_t n, float* packed) {
  const std::int64_t size = 2 * cols + 1;
  for (std::int64_t i = global_thread(); i < n; i += grid_threads()) {
    const std::int64_t slot = i / size, k = i % size;
    float v = 0.f;
    if (slot == replica) {
      if (k == 0) v = count;
      else if (count > 0.f) v = k <= cols ? mean[k - 1] : var[k - 1 - cols];
    }
    packed[i] = v;
  }
}

__global__ void synchronized_moments_kernel(const float* p, std::int64_t cols, int replicas, float* mean, float* var) {
  const std::int64_t c = global_thread();
  if (c >= cols) return;
  const std::int64_t size = 2 * cols + 1;
  double total = 0.0;
  for (int r = 0; r < replicas; ++r) total += p[r * size];
  if (total <= 0) {
    mean[c] = 0.f;
    var[c] = 0.f;
    return;
  }
  double mu = 0.0;
  for (int r = 0; r < replicas; ++r) mu = __dadd_rn(mu, __dmul_rn(p[r * size], p[r * size + 1 + c]));
  mu /= total;
  double m2 = 0.0;
  for (int r = 0; r < replicas; ++r) {
    const float* s = p + r * size;
    if (s[0] == 0.f) continue;
    const double d = __dsub_rn(s[1 + c], mu);
    m2 = __dadd_rn(m2, __dmul_rn(s[0], __dadd_rn(s[1 + cols + c], __dmul_rn(d, d))));
  }
  mean[c] = static_cast<float>(mu);
  var[c] = static_cast<float>(m2 / total);
}

__global__ void average_moments_kernel(const float* p, std::int64_t cols, int replicas, float* mean, float* var) {
  const std::int64_t c = global_thread();
  if (c >= cols) return;
  const std::int64_t size = 2 * cols + 1;
  float total = 0.f, sum_mean = 0.f, sum_var = 0.f;
  for (int r = 0; r < replicas; ++r) {
    const float* s = p + r * size;
    total = __fadd_rn(total, s[0]);
    sum_mean = __fadd_rn(sum_mean, __fmul_rn(s[1 + c], s[0]));
    sum_var = __fadd_rn(sum_var, __fmul_rn(s[1 + cols + c], s[0]));
  }
  mean[c] = __fdiv_rn(sum_mean, total);
  var[c] = __fdiv_rn(sum_var, total);
}

__global__ void moving_average_kernel(float* moving, const float* value, float momentum, std::int64_t n) {
  const float keep = 1.f - momentum;
  for (std::int64_t i = global_thread(); i < n; i += grid_threads())
    moving[i] = __fadd_rn(__fmul_rn(moving[i], momentum), __fmul_rn(value[i], keep));
}

__global__ void grad_sums_finish_kernel(float* sums, float count, const float* var, float eps, std::int64_t cols,
                                        float* dgamma, float* dbeta) {
  const std::int64_t c = global_thread();
  if (c == 0) sums[2 * cols] = count;
  if (c >= cols) return;
  if (dbeta) dbeta[c] = sums[c];
  if (dgamma) dgamma[c] = __fdiv_rn(sums[cols + c], __fsqrt_rn(__fadd_rn(var[c], eps)));
}

}  // namespace

void pack_moments(const float* mean, const float* var, float count, std::int64_t cols, int replica, int replicas,
                  float* packed, cudaStream_t stream) {
  const std::int64_t n = static_cast<std::int64_t>(replicas) * (2 * cols + 1);
  if (n <= 0) return;
  pack_moments_kernel<<<elementwise_blocks(n), kThreads, 0, stream>>>(mean, var, count, cols, replica, n, packed);
}

void synchronized_moments(const float* packed, std::int64_t cols, int replicas, float* mean, float* var,
                          cudaStream_t stream) {
  if (cols <= 0) return;
  synchronized_moments_kernel<<<channel_blocks(cols), kThreads, 0, stream>>>(packed, cols, replicas, mean, var);
}

void average_moments(const float* packed, std::int64_t cols, int replicas, float* mean, float* var,
                     cudaStream_t stream) {
  if (cols <= 0) return;
  average_moments_kernel<<<channel_blocks(cols), kThreads, 0, stream>>>(packed, cols, replicas, mean, var);
}

void moving_average(float* moving, const float* value, float momentum, std::int64_t n, cudaStream_t stream) {
  if (n <= 0) return;
  moving_average_kernel<<<elementwise_blocks(n), kThreads, 0, stream>>>(moving, value, momentum, n);
}

void grad_sums_finish(float* sums, float count, const float* var, float eps, std::int64_t cols, float* dgamma,
                      float* dbeta, cudaStream_t stream) {
  grad_sums_finish_kernel<<<channel_blocks(cols + 1), kThreads, 0, stream>>>(sums, count, var, eps, cols, dgamma,
                                                                             dbeta);
}

}  // namespace kerascpp::cuda::kern
