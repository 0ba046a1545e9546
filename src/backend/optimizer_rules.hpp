// The elementwise rules of TrainingKernels::optimizer_update (kerascpp/backend/optimizer_update.hpp),
// shared by the CPU loop and the CUDA kernel so both compute the same formula. On the device every
// operation is a round-to-nearest intrinsic, so nvcc cannot contract it into an FMA; the CPU file
// is compiled with -ffp-contract=off: both round every operation alike.
#pragma once
#include <cmath>
#include <cstdint>

#include "kerascpp/backend/optimizer_update.hpp"

#include "backend/host_device.hpp"

namespace kerascpp::optimizer_rules {

#ifdef __CUDA_ARCH__
__device__ inline float add(float a, float b) { return __fadd_rn(a, b); }
__device__ inline float sub(float a, float b) { return __fsub_rn(a, b); }
__device__ inline float mul(float a, float b) { return __fmul_rn(a, b); }
__device__ inline float div(float a, float b) { return __fdiv_rn(a, b); }
__device__ inline float root(float a) { return __fsqrt_rn(a); }
#else
inline float add(float a, float b) { return a + b; }
inline float sub(float a, float b) { return a - b; }
inline float mul(float a, float b) { return a * b; }
inline float div(float a, float b) { return a / b; }
inline float root(float a) { return std::sqrt(a); }
#endif

// x^p for Ftrl's learning_rate_power; the default −0.5 (x^0.5) as a correctly rounded sqrt.
KERASCPP_HOST_DEVICE inline float power(float x, float p) { return p == 0.5f ? root(x) : powf(x, p); }
// NaN stays NaN (numpy's sign and clip).
KERASCPP_HOST_DEVICE inline float sign(float x) { return x > 0.f ? 1.f : (x < 0.f ? -1.f : x); }
KERASCPP_HOST_DEVICE inline float clip(float x, float lo, float hi) { return x < lo ? lo : (x > hi ? hi : x); }

// One element of rule R. s0..s2: the rule's slots (see UpdateRule), null where it has fewer.
template <UpdateRule R>
KERASCPP_HOST_DEVICE inline void apply_rule(const UpdateParams& p, std::int64_t i, float* w, const float* g, float* s0,
                                            float* s1, float* s2) {
  if constexpr (R == UpdateRule::adamax) {
    const float gi = g[i];
    const float m = add(s0[i], mul(sub(gi, s0[i]), sub(1.f, p.beta_1)));
    const float u = fmaxf(mul(p.beta_2, s1[i]), fabsf(gi));
    s0[i] = m;
    s1[i] = u;
    w[i] = sub(w[i], div(mul(p.lr, m), mul(p.one_minus_beta_1_power, add(u, p.epsilon))));
  } else if constexpr (R == UpdateRule::adadelta) {
    const float gi = g[i], rho = p.beta_1, one_minus_rho = sub(1.f, rho);
    const float a = add(mul(rho, s0[i]), mul(one_minus_rho, mul(gi, gi)));
    const float delta = -div(mul(root(add(s1[i], p.epsilon)), gi), root(add(a, p.epsilon)));
    s0[i] = a;
    s1[i] = add(mul(rho, s1[i]), mul(one_minus_rho, mul(delta, delta)));
    w[i] = add(w[i], mul(p.lr, delta));
  } else if constexpr (R == UpdateRule::ftrl) {
    const float gi = g[i], wi = w[i], n = s0[i], neg_p = -p.lr_power;
    const float grad_to_use = add(gi, mul(mul(2.f, p.l2_shrinkage), wi));
    const float n_new = add(n, mul(gi, gi));
    const float n_new_p = power(n_new, neg_p);
    const float z = add(s1[i], sub(grad_to_use, mul(div(sub(n_new_p, power(n, neg_p)), p.lr), wi)));
    const float quadratic = add(div(n_new_p, p.lr), mul(2.f, p.l2));
    s1[i] = z;
    w[i] = div(sub(clip(z, -p.l1, p.l1), z), quadratic);
    s0[i] = n_new;
  } else if constexpr (R == UpdateRule::lion) {
    const float gi = g[i], m = s0[i];
    w[i] = sub(w[i], mul(p.lr, sign(add(mul(m, p.beta_1), mul(gi, sub(1.f, p.beta_1))))));
    s0[i] = add(mul(m, p.beta_2), mul(gi, sub(1.f, p.beta_2)));
  } else if constexpr (R == UpdateRule::lamb_direction) {
    const float gi = g[i];
    const float m = add(s0[i], mul(sub(gi, s0[i]), sub(1.f, p.beta_1)));
    const float v = add(s1[i], mul(sub(mul(gi, gi), s1[i]), sub(1.f, p.beta_2)));
    s0[i] = m;
    s1[i] = v;
    s2[i] = div(div(m, p.one_minus_beta_1_power), add(root(div(v, p.one_minus_beta_2_power)), p.epsilon));
  } else if constexpr (R == UpdateRule::schedule_free_adamw) {
    const float gi = g[i], z_old = s0[i], one_minus_b1 = sub(1.f, p.beta_1);
    const float v = add(s1[i], mul(sub(mul(gi, gi), s1[i]), sub(1.f, p.beta_2)));
    const float denom = add(root(div(v, p.one_minus_beta_2_power)), p.epsilon);
    const float z = sub(z_old, div(mul(p.lr, gi), denom));
    const float x_old = div(sub(w[i], mul(one_minus_b1, z_old)), p.beta_1);
    const float x_new = add(mul(sub(1.f, p.value), x_old), mul(p.value, z));
    s0[i] = z;
    s1[i] = v;
    w[i] = add(mul(one_minus_b1, z), mul(p.beta_1, x_new));
  } else if constexpr (R == UpdateRule::clip_value) {
    w[i] = clip(w[i], -p.value, p.value);
  } else if constexpr (R == UpdateRule::accumulate_gradient) {
    s0[i] = add(s0[i], w[i]);
  } else if constexpr (R == UpdateRule::average_accumulated) {
    w[i] = div(add(w[i], s0[i]), p.value);
    s0[i] = 0.f;
  } else if constexpr (R == UpdateRule::divide) {
    w[i] = div(w[i], p.value);
  } else if constexpr (R == UpdateRule::moving_average) {
    s0[i] = add(mul(p.beta_1, s0[i]), mul(sub(1.f, p.beta_1), w[i]));
  }
}

// How many slots rule R updates, and whether it reads a gradient.
KERASCPP_HOST_DEVICE constexpr int slot_count(UpdateRule r) {
  switch (r) {
    case UpdateRule::adamax:
    case UpdateRule::adadelta:
    case UpdateRule::ftrl:
    case UpdateRule::schedule_free_adamw:
      return 2;
    case UpdateRule::lion:
      return 1;
    case UpdateRule::lamb_direction:
      return 3;
    case UpdateRule::clip_value:
    case UpdateRule::divide:
      return 0;
    case UpdateRule::accumulate_gradient:
    case UpdateRule::average_accumulated:
    case UpdateRule::moving_average:
      return 1;
  }
  return 0;
}
KERASCPP_HOST_DEVICE constexpr bool reads_gradient(UpdateRule r) {
  return static_cast<int>(r) <= static_cast<int>(UpdateRule::schedule_free_adamw);
}

// Calls f(std::integral_constant-like tag) with rule r as a compile-time value, so each rule gets
// its own loop (no switch per element).
template <UpdateRule R>
struct RuleTag {
  static constexpr UpdateRule value = R;
};
template <class F>
KERASCPP_HOST_DEVICE inline void dispatch_rule(UpdateRule r, F&& f) {
  switch (r) {
    case UpdateRule::adamax:
      f(RuleTag<UpdateRule::adamax>{});
      break;
    case UpdateRule::adadelta:
      f(RuleTag<UpdateRule::adadelta>{});
      break;
    case UpdateRule::ftrl:
      f(RuleTag<UpdateRule::ftrl>{});
      break;
    case UpdateRule::lion:
      f(RuleTag<UpdateRule::lion>{});
      break;
    case UpdateRule::lamb_direction:
      f(RuleTag<UpdateRule::lamb_direction>{});
      break;
    case UpdateRule::schedule_free_adamw:
      f(RuleTag<UpdateRule::schedule_free_adamw>{});
      break;
    case UpdateRule::clip_value:
      f(RuleTag<UpdateRule::clip_value>{});
      break;
    case UpdateRule::accumulate_gradient:
      f(RuleTag<UpdateRule::accumulate_gradient>{});
      break;
    case UpdateRule::average_accumulated:
      f(RuleTag<UpdateRule::average_accumulated>{});
      break;
    case UpdateRule::divide:
      f(RuleTag<UpdateRule::divide>{});
      break;
    case UpdateRule::moving_average:
      f(RuleTag<UpdateRule::moving_average>{});
      break;
  }
}

}  // namespace kerascpp::optimizer_rules
