// The elementwise activations as scalar formulas, one definition for the CPU's hand-written
// loops (the kinds oneDNN has no eltwise algorithm for) and the CUDA kernels (all of them).
// NaN in gives NaN out: every clip is written as comparisons that are false for NaN, not as
// fminf/fmaxf (which return the other operand).
#pragma once
#include <math.h>

#include "kerascpp/backend/activations.hpp"

#if defined(__CUDACC__)
#define KCPP_ACT_HD __host__ __device__ __forceinline__
#else
#define KCPP_ACT_HD inline
#endif

namespace kerascpp::act_formula {

// Keras' selu constants (keras/src/backend/*/nn.py).
constexpr float kSeluAlpha = 1.6732632423543772f;
constexpr float kSeluScale = 1.0507009873554805f;
// gelu's tanh approximation: sqrt(2/pi) and the cubic coefficient.
constexpr float kGeluK = 0.7978845608028654f;
constexpr float kGeluC = 0.044715f;
constexpr float kInvSqrt2 = 0.7071067811865476f;
constexpr float kInvSqrt2Pi = 0.3989422804014327f;

KCPP_ACT_HD float sigmoid(float x) {
  // Two branches so exp never overflows to a NaN (inf/inf).
  if (x >= 0.f) return 1.f / (1.f + expf(-x));
  const float e = expf(x);
  return e / (1.f + e);
}
KCPP_ACT_HD float softplus(float x) { return (x > 0.f ? x : 0.f) + log1pf(expf(-fabsf(x))); }
// clip(x, lo, hi) keeping NaN.
KCPP_ACT_HD float clip(float x, float lo, float hi) { return x < lo ? lo : (x > hi ? hi : x); }
KCPP_ACT_HD float hard_sigmoid(float x) { return clip(x / 6.f + 0.5f, 0.f, 1.f); }

// f(x) for the elementwise kinds (a, b, c: ActivationFn's alpha, beta, gamma).
KCPP_ACT_HD float value(ActivationKind k, float a, float b, float c, float x) {
  using K = ActivationKind;
  switch (k) {
    case K::relu: {  // Keras' ReLU.static_call: thresholded part, capped, minus the slope's part
      float p = c != 0.f ? (x > c ? x : (x != x ? x : 0.f)) : (x < 0.f ? 0.f : x);
      if (b < INFINITY) p = clip(p, 0.f, b);
      if (a != 0.f) p -= a * (c - x > 0.f ? c - x : 0.f);
      return p;
    }
    case K::leaky_relu:
      return x >= 0.f ? x : a * x;
    case K::relu6:
      return clip(x, 0.f, 6.f);
    case K::hard_tanh:
      return clip(x, -1.f, 1.f);
    case K::elu:
      return x >= 0.f ? x : a * expm1f(x);
    case K::selu:
      return kSeluScale * (x >= 0.f ? x : kSeluAlpha * expm1f(x));
    case K::celu:
      return x >= 0.f ? x : a * expm1f(x / a);
    case K::exponential:
      return expf(x);
    case K::gelu:
      if (a != 0.f) return 0.5f * x * (1.f + tanhf(kGeluK * (x + kGeluC * x * x * x)));
      return 0.5f * x * (1.f + erff(x * kInvSqrt2));
    case K::hard_sigmoid:
      return hard_sigmoid(x);
    case K::hard_silu:
      return x * hard_sigmoid(x);
    case K::hard_shrink:
      return fabsf(x) > a ? x : (x != x ? x : 0.f);
    case K::soft_shrink:
      return x > a ? x - a : (x < -a ? x + a : (x != x ? x : 0.f));
    case K::tanh_shrink:
      return x - tanhf(x);
    case K::threshold:
      return x > a ? x : (x != x ? x : b);
    case K::sigmoid:
      return sigmoid(x);
    case K::tanh:
      return tanhf(x);
    case K::log_sigmoid:
      return -softplus(-x);
    case K::mish:
      return x * tanhf(softplus(x));
    case K::silu:
      return x * sigmoid(x);
    case K::softplus:
      return softplus(x);
    case K::softsign:
      return x / (1.f + fabsf(x));
    case K::sparse_plus:
      return x <= -1.f ? 0.f : (x < 1.f ? 0.25f * (x + 1.f) * (x + 1.f) : x);
    case K::sparse_sigmoid:
      return x <= -1.f ? 0.f : (x >= 1.f ? 1.f : 0.5f * (x + 1.f));
    case K::squareplus:
      return 0.5f * (x + sqrtf(x * x + a));
    default:  // linear (the axis-wise kinds never come here)
      return x;
  }
}

// f'(.) at v, where v is the output y when `from_output` (ActivationFn::gradient_from_output)
// and the input x otherwise. At a kink the one-sided value Keras' autodiff gives is used.
KCPP_ACT_HD float slope(ActivationKind k, float a, float b, float c, float v, bool from_output) {
  using K = ActivationKind;
  if (from_output) {
    const float y = v;
    switch (k) {
      case K::relu:
        return y > 0.f ? 1.f : 0.f;
      case K::relu6:
        return y > 0.f && y < 6.f ? 1.f : 0.f;
      case K::hard_tanh:
        return y > -1.f && y < 1.f ? 1.f : 0.f;
      case K::hard_sigmoid:
        return y > 0.f && y < 1.f ? 1.f / 6.f : 0.f;
      case K::sparse_sigmoid:
        return y > 0.f && y < 1.f ? 0.5f : 0.f;
      case K::elu:
        return y > 0.f ? 1.f : y + a;
      case K::celu:
        return y > 0.f ? 1.f : y / a + 1.f;
      case K::selu:
        return y > 0.f ? kSeluScale : y + kSeluScale * kSeluAlpha;
      case K::exponential:
        return y;
      case K::sigmoid:
        return y * (1.f - y);
      case K::tanh:
        return 1.f - y * y;
      case K::softplus:  // sigmoid(x) = 1 - exp(-y)
        return -expm1f(-y);
      case K::log_sigmoid:  // sigmoid(-x) = 1 - exp(y)
        return -expm1f(y);
      case K::softsign: {
        const float t = 1.f - fabsf(y);
        return t * t;
      }
      default:
        return 1.f;
    }
  }
  const float x = v;
  switch (k) {
    case K::relu: {
      float d = (c != 0.f ? x > c : x > 0.f) ? 1.f : 0.f;
      if (b < INFINITY && (x >= b || x <= 0.f)) d = 0.f;
      if (a != 0.f && x < c) d += a;
      return d;
    }
    case K::leaky_relu:
      return x > 0.f ? 1.f : a;
    case K::relu6:
      return x > 0.f && x < 6.f ? 1.f : 0.f;
    case K::hard_tanh:
      return x > -1.f && x < 1.f ? 1.f : 0.f;
    case K::elu:
      return x > 0.f ? 1.f : a * expf(x);
    case K::selu:
      return x > 0.f ? kSeluScale : kSeluScale * kSeluAlpha * expf(x);
    case K::celu:
      return x > 0.f ? 1.f : expf(x / a);
    case K::exponential:
      return expf(x);
    case K::gelu: {
      if (a != 0.f) {
        const float t = tanhf(kGeluK * (x + kGeluC * x * x * x));
        return 0.5f * (1.f + t) + 0.5f * x * (1.f - t * t) * kGeluK * (1.f + 3.f * kGeluC * x * x);
      }
      return 0.5f * (1.f + erff(x * kInvSqrt2)) + x * kInvSqrt2Pi * expf(-0.5f * x * x);
    }
    case K::hard_sigmoid:
      return x > -3.f && x < 3.f ? 1.f / 6.f : 0.f;
    case K::hard_silu:
      return hard_sigmoid(x) + (x > -3.f && x < 3.f ? x / 6.f : 0.f);
    case K::hard_shrink:
    case K::soft_shrink:
      return fabsf(x) > a ? 1.f : 0.f;
    case K::tanh_shrink: {
      const float t = tanhf(x);
      return t * t;
    }
    case K::threshold:
      return x > a ? 1.f : 0.f;
    case K::sigmoid: {
      const float s = sigmoid(x);
      return s * (1.f - s);
    }
    case K::tanh: {
      const float t = tanhf(x);
      return 1.f - t * t;
    }
    case K::log_sigmoid:
      return sigmoid(-x);
    case K::mish: {
      const float t = tanhf(softplus(x));
      return t + x * (1.f - t * t) * sigmoid(x);
    }
    case K::silu: {
      const float s = sigmoid(x);
      return s * (1.f + x * (1.f - s));
    }
    case K::softplus:
      return sigmoid(x);
    case K::softsign: {
      const float t = 1.f + fabsf(x);
      return 1.f / (t * t);
    }
    case K::sparse_plus:
      return x <= -1.f ? 0.f : (x < 1.f ? 0.5f * (x + 1.f) : 1.f);
    case K::sparse_sigmoid:
      return x > -1.f && x < 1.f ? 0.5f : 0.f;
    case K::squareplus:
      return 0.5f * (1.f + x / sqrtf(x * x + a));
    default:
      return 1.f;
  }
}

}  // namespace kerascpp::act_formula
