// Small helpers for describing kerascpp tensors to oneDNN and reporting its failures.
#pragma once
#include <fmt/format.h>

#include <oneapi/dnnl/dnnl.hpp>
#include <string>

#include "backend/activation_formulas.hpp"
#include "kerascpp/backend/backend.hpp"

namespace kerascpp::cpu {

using dims = dnnl::memory::dims;
using tag = dnnl::memory::format_tag;

inline dnnl::memory::desc f32_md(const dims& d, tag t) { return {d, dnnl::memory::data_type::f32, t}; }
inline dnnl::memory::desc f32_strided_md(const dims& d, const dims& strides) {
  return {d, dnnl::memory::data_type::f32, strides};
}
// The same in data type `dt` (a matmul's or convolution's operands in the compute dtype).
inline dnnl::memory::desc typed_md(const dims& d, dnnl::memory::data_type dt, tag t) { return {d, dt, t}; }
// oneDNN's data type for a float tensor's dtype (float32, bfloat16, float16).
inline dnnl::memory::data_type dnnl_type_of(DType dtype) {
  return dtype == DType::bfloat16  ? dnnl::memory::data_type::bf16
         : dtype == DType::float16 ? dnnl::memory::data_type::f16
                                   : dnnl::memory::data_type::f32;
}
inline dnnl::memory::desc typed_strided_md(const dims& d, dnnl::memory::data_type dt, const dims& strides) {
  return {d, dt, strides};
}

// oneDNN's eltwise algorithm for an activation, with its alpha/beta and an output scale (selu is
// oneDNN's elu times a constant: as a post-op the scale is free, the plain eltwise primitive has
// none). undef: oneDNN has none, and the hand-written formulas (activation_formulas.hpp) run.
// relu6, hard_tanh and plain relu are hand-written although clip_v2 and relu exist: oneDNN's
// max/min turn NaN into the bound (see nan_propagation.hpp), ours keep it.
struct EltwiseAlg {
  dnnl::algorithm alg = dnnl::algorithm::undef;
  float alpha = 0.f, beta = 0.f, scale = 1.f;
  bool found() const { return alg != dnnl::algorithm::undef; }
};
inline EltwiseAlg eltwise_forward_alg(const ActivationFn& act) {
  using A = dnnl::algorithm;
  switch (act.kind) {
    case ActivationKind::sigmoid:
      return {A::eltwise_logistic};
    case ActivationKind::tanh:
      return {A::eltwise_tanh};
    case ActivationKind::leaky_relu:
      return {A::eltwise_relu, act.alpha};
    case ActivationKind::elu:
      return {A::eltwise_elu, act.alpha};
    case ActivationKind::selu:
      return {A::eltwise_elu, act_formula::kSeluAlpha, 0.f, act_formula::kSeluScale};
    case ActivationKind::exponential:
      return {A::eltwise_exp};
    case ActivationKind::gelu:
      return {act.alpha != 0.f ? A::eltwise_gelu_tanh : A::eltwise_gelu_erf};
    case ActivationKind::hard_silu:                    // x * relu6(x + 3) / 6, Keras' formula (alpha, beta: 3.x's
      return {A::eltwise_hardswish, 1.f / 6.f, 0.5f};  // x * clip(alpha x + beta, 0, 1); 2.x ignores them)
    case ActivationKind::log_sigmoid:
      return {A::eltwise_logsigmoid};
    case ActivationKind::mish:
      return {A::eltwise_mish};
    case ActivationKind::silu:
      return {A::eltwise_swish, 1.f};
    case ActivationKind::softplus:  // log(1 + exp(alpha x)) / alpha in 3.x; 2.x ignores alpha
      return {A::eltwise_soft_relu, 1.f};
    default:
      return {};
  }
}
// The backward algorithm: from the output y where act.gradient_from_output() (the *_use_dst_for_bwd
// ones, so layers need not keep their pre-activation input), from the input x otherwise.
inline EltwiseAlg eltwise_backward_alg(const ActivationFn& act) {
  using A = dnnl::algorithm;
  const bool from_y = act.gradient_from_output();
  switch (act.kind) {
    case ActivationKind::sigmoid:
      return {A::eltwise_logistic_use_dst_for_bwd};
    case ActivationKind::tanh:
      return {A::eltwise_tanh_use_dst_for_bwd};
    case ActivationKind::exponential:
      return {A::eltwise_exp_use_dst_for_bwd};
    case ActivationKind::elu:
      return from_y ? EltwiseAlg{A::eltwise_elu_use_dst_for_bwd, act.alpha} : EltwiseAlg{A::eltwise_elu, act.alpha};
    case ActivationKind::leaky_relu:
    case ActivationKind::gelu:
    case ActivationKind::hard_silu:
    case ActivationKind::mish:
    case ActivationKind::silu:
      return eltwise_forward_alg(act);
    default:
      return {};
  }
}
inline bool uses_dst_for_bwd(dnnl::algorithm alg) {
  using A = dnnl::algorithm;
  return alg == A::eltwise_logistic_use_dst_for_bwd || alg == A::eltwise_tanh_use_dst_for_bwd ||
         alg == A::eltwise_exp_use_dst_for_bwd || alg == A::eltwise_elu_use_dst_for_bwd;
}

// Activations fused into Dense/Conv2D as a oneDNN eltwise post-op: those with an algorithm.
inline bool fused_post_op(const ActivationFn& act) { return eltwise_forward_alg(act).found(); }
inline void append_post_op(dnnl::post_ops& po, const ActivationFn& act) {
  const EltwiseAlg e = eltwise_forward_alg(act);
  po.append_eltwise(e.scale, e.alg, e.alpha, e.beta);
}
// Cache key part for the post-op: activations that are not fused share one primitive.
inline std::string post_op_key(const ActivationFn& act) {
  return fused_post_op(act) ? fmt::format("{}:{}", static_cast<int>(act.kind), act.alpha) : std::string("-");
}

// Runs a primitive builder, turning oneDNN's refusal into a kerascpp::Error with context.
template <class F>
auto guarded_build(const char* op, const std::string& key, F&& build) -> decltype(build()) {
  try {
    return build();
  } catch (const dnnl::error& e) {
    throw DeviceError(
        fmt::format("{}: oneDNN could not create a primitive for this configuration ({}): {}", op, key, e.what()));
  }
}

}  // namespace kerascpp::cpu
