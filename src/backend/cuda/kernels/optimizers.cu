// Fused optimizer updates. Written with round-to-nearest intrinsics so nvcc does not contract
// them into FMAs: every operation rounds as in the CPU backend's loops
// (backend/cpu/optimizer_updates.cpp), and results are the same bits.
#include "backend/cuda/kernels/common.cuh"
#include "backend/optimizer_rules.hpp"

namespace kerascpp::cuda::kern {

namespace {

__global__ void sgd_plain_kernel(float* w, const float* g, std::int64_t n, float lr) {
  for (std::int64_t i = global_thread(); i < n; i += grid_threads()) w[i] = __fsub_rn(w[i], __fmul_rn(g[i], lr));
}

__global__ void sgd_momentum_kernel(float* w, const float* g, float* velocity, std::int64_t n, float lr, float momentum,
                                    bool nesterov) {
  for (std::int64_t i = global_thread(); i < n; i += grid_threads()) {
    const float gl = __fmul_rn(g[i], lr);
    const float v = __fsub_rn(__fmul_rn(velocity[i], momentum), gl);
    velocity[i] = v;
    w[i] = __fadd_rn(w[i], nesterov ? __fsub_rn(__fmul_rn(v, momentum), gl) : v);
  }
}

__global__ void adam_kernel(float* w, const float* g, float* m, float* v, std::int64_t n, float lr_t,
                            float one_minus_b1, float one_minus_b2, float eps) {
  for (std::int64_t i = global_thread(); i < n; i += grid_threads()) {
    // Keras: m += (g − m)(1 − β1), v += (g² − v)(1 − β2), w −= m·lr_t / (√v + ε).
    const float gi = g[i];
    const float mi = __fadd_rn(m[i], __fmul_rn(__fsub_rn(gi, m[i]), one_minus_b1));
    const float vi = __fadd_rn(v[i], __fmul_rn(__fsub_rn(__fmul_rn(gi, gi), v[i]), one_minus_b2));
    m[i] = mi;
    v[i] = vi;
    w[i] = __fsub_rn(w[i], __fdiv_rn(__fmul_rn(mi, lr_t), __fadd_rn(__fsqrt_rn(vi), eps)));
  }
}

__global__ void rmsprop_kernel(float* w, const float* g, float* v, std::int64_t n, float lr, float rho,
                               float one_minus_rho, float eps) {
  for (std::int64_t i = global_thread(); i < n; i += grid_threads()) {
    const float gi = g[i];
    const float vi = __fadd_rn(__fmul_rn(rho, v[i]), __fmul_rn(one_minus_rho, __fmul_rn(gi, gi)));
    v[i] = vi;
    w[i] = __fsub_rn(w[i], __fdiv_rn(__fmul_rn(lr, gi), __fsqrt_rn(__fadd_rn(vi, eps))));
  }
}

__global__ void weight_decay_kernel(float* w, std::int64_t n, float lr, float weight_decay) {
  for (std::int64_t i = global_thread(); i < n; i += grid_threads())
    w[i] = __fsub_rn(w[i], __fmul_rn(__fmul_rn(w[i], weight_decay), lr));
}

__global__ void adagrad_kernel(float* w, const float* g, float* acc, std::int64_t n, float lr, float eps) {
  for (std::int64_t i = global_thread(); i < n; i += grid_threads()) {
    const float gi = g[i];
    const float ai = __fadd_rn(acc[i], __fmul_rn(gi, gi));
    acc[i] = ai;
    w[i] = __fsub_rn(w[i], __fdiv_rn(__fmul_rn(lr, gi), __fsqrt_rn(__fadd_rn(ai, eps))));
  }
}

__global__ void nadam_kernel(float* w, const float* g, float* m, float* v, std::int64_t n, float lr, float one_minus_b1,
                             float one_minus_b2, float eps, float u_next, float m_den, float g_num, float g_den,
                             float v_den) {
  for (std::int64_t i = global_thread(); i < n; i += grid_threads()) {
    // Keras: m += (g − m)(1 − β1), v += (g² − v)(1 − β2), w −= m̂·lr / (√v̂ + ε) with
    // m̂ = u_next·m / m_den + g_num·g / g_den, v̂ = v / v_den (the CPU loop's operation order).
    const float gi = g[i];
    const float mi = __fadd_rn(m[i], __fmul_rn(__fsub_rn(gi, m[i]), one_minus_b1));
    const float vi = __fadd_rn(v[i], __fmul_rn(__fsub_rn(__fmul_rn(gi, gi), v[i]), one_minus_b2));
    m[i] = mi;
    v[i] = vi;
    const float m_hat = __fadd_rn(__fdiv_rn(__fmul_rn(u_next, mi), m_den), __fdiv_rn(__fmul_rn(g_num, gi), g_den));
    w[i] = __fsub_rn(w[i], __fdiv_rn(__fmul_rn(m_hat, lr), __fadd_rn(__fsqrt_rn(__fdiv_rn(vi, v_den)), eps)));
  }
}

}  // namespace

void nadam_update(float* w, const float* g, float* m, float* v, std::int64_t n, float lr, float beta_1, float beta_2,
                  float eps, float u, float u_next, float u_product, float beta_2_power, cudaStream_t stream) {
  if (n <= 0) return;
  // The scalars as the CPU backend rounds them (host float arithmetic, no contraction).
  const float m_den = 1.f - u_product * u_next, g_num = 1.f - u, g_den = 1.f - u_product, v_den = 1.f - beta_2_power;
  nadam_kernel<<<elementwise_blocks(n), kThreads, 0, stream>>>(w, g, m, v, n, lr, 1.f - beta_1, 1.f - beta_2, eps,
                                                               u_next, m_den, g_num, g_den, v_den);
}

void sgd_update(float* w, const float* g, float* velocity, std::int64_t n, float lr, float momentum, bool nesterov,
                cudaStream_t stream) {
  if (n <= 0) return;
  if (momentum == 0.f) sgd_plain_kernel<<<elementwise_blocks(n), kThreads, 0, stream>>>(w, g, n, lr);
  else sgd_momentum_kernel<<<elementwise_blocks(n), kThreads, 0, stream>>>(w, g, velocity, n, lr, momentum, nesterov);
}

void adam_update(float* w, const float* g, float* m, float* v, std::int64_t n, float lr_t, float beta_1, float beta_2,
                 float eps, cudaStream_t stream) {
  if (n <= 0) return;
  adam_kernel<<<elementwise_blocks(n), kThreads, 0, stream>>>(w, g, m, v, n, lr_t, 1.f - beta_1, 1.f - beta_2, eps);
}

void rmsprop_update(float* w, const float* g, float* v, std::int64_t n, float lr, float rho, float eps,
                    cudaStream_t stream) {
  if (n <= 0) return;
  rmsprop_kernel<<<elementwise_blocks(n), kThreads, 0, stream>>>(w, g, v, n, lr, rho, 1.f - rho, eps);
}

void weight_decay_update(float* w, std::int64_t n, float lr, float weight_decay, cudaStream_t stream) {
  if (n <= 0) return;
  weight_decay_kernel<<<elementwise_blocks(n), kThreads, 0, stream>>>(w, n, lr, weight_decay);
}

void adagrad_update(float* w, const float* g, float* accumulator, std::int64_t n, float lr, float eps,
                    cudaStream_t stream) {
  if (n <= 0) return;
  adagrad_kernel<<<elementwise_blocks(n), kThreads, 0, stream>>>(w, g, accumulator, n, lr, eps);
}

namespace {

template <UpdateRule R>
__global__ void rule_kernel(UpdateParams p, float* w, const float* g, float* s0, float* s1, float* s2, std::int64_t n) {
  for (std::int64_t i = global_thread(); i < n; i += grid_threads())
    optimizer_rules::apply_rule<R>(p, i, w, g, s0, s1, s2);
}

template <UpdateRule R>
void launch_rule(const UpdateParams& p, float* w, const float* g, float* s0, float* s1, float* s2, std::int64_t n,
                 cudaStream_t stream) {
  rule_kernel<R><<<elementwise_blocks(n), kThreads, 0, stream>>>(p, w, g, s0, s1, s2, n);
}

}  // namespace

void optimizer_update(const UpdateParams& p, float* w, const float* g, float* s0, float* s1, float* s2, std::int64_t n,
                      cudaStream_t stream) {
  if (n <= 0) return;
  switch (p.rule) {
    case UpdateRule::adamax:
      launch_rule<UpdateRule::adamax>(p, w, g, s0, s1, s2, n, stream);
      break;
    case UpdateRule::adadelta:
      launch_rule<UpdateRule::adadelta>(p, w, g, s0, s1, s2, n, stream);
      break;
    case UpdateRule::ftrl:
      launch_rule<UpdateRule::ftrl>(p, w, g, s0, s1, s2, n, stream);
      break;
    case UpdateRule::lion:
      launch_rule<UpdateRule::lion>(p, w, g, s0, s1, s2, n, stream);
      break;
    case UpdateRule::lamb_direction:
      launch_rule<UpdateRule::lamb_direction>(p, w, g, s0, s1, s2, n, stream);
      break;
    case UpdateRule::schedule_free_adamw:
      launch_rule<UpdateRule::schedule_free_adamw>(p, w, g, s0, s1, s2, n, stream);
      break;
    case UpdateRule::clip_value:
      launch_rule<UpdateRule::clip_value>(p, w, g, s0, s1, s2, n, stream);
      break;
    case UpdateRule::accumulate_gradient:
      launch_rule<UpdateRule::accumulate_gradient>(p, w, g, s0, s1, s2, n, stream);
      break;
    case UpdateRule::average_accumulated:
      launch_rule<UpdateRule::average_accumulated>(p, w, g, s0, s1, s2, n, stream);
      break;
    case UpdateRule::divide:
      launch_rule<UpdateRule::divide>(p, w, g, s0, s1, s2, n, stream);
      break;
    case UpdateRule::moving_average:
      launch_rule<UpdateRule::moving_average>(p, w, g, s0, s1, s2, n, stream);
      break;
  }
}

}  // namespace kerascpp::cuda::kern
