// Small helpers for describing kerascpp tensors to oneDNN and reporting its failures.
#pragma once
#include <fmt/format.h>

#include <oneapi/dnnl/dnnl.hpp>
#include <string>

#include "kerascpp/backend.hpp"

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

// Activations fused into Dense/Conv2D as a oneDNN eltwise post-op. Not relu: oneDNN computes it
// as max(x, 0), which turns NaN into 0 (see nan_propagation.hpp); its sigmoid and tanh keep NaN.
inline bool fused_post_op(ActivationKind act) { return act == ActivationKind::sigmoid || act == ActivationKind::tanh; }
// Cache key part for the post-op: activations that are not fused share one primitive.
inline int post_op_key(ActivationKind act) { return fused_post_op(act) ? static_cast<int>(act) : -1; }
// Forward algorithm of sigmoid and tanh (relu is nan_propagation's; linear/softmax: none).
inline dnnl::algorithm eltwise_forward_alg(ActivationKind act) {
  switch (act) {
    case ActivationKind::sigmoid:
      return dnnl::algorithm::eltwise_logistic;
    case ActivationKind::tanh:
      return dnnl::algorithm::eltwise_tanh;
    default:
      return dnnl::algorithm::undef;
  }
}
// Backward from the forward output y, so layers need not keep their pre-activation input.
inline dnnl::algorithm eltwise_backward_alg(ActivationKind act) {
  switch (act) {
    case ActivationKind::sigmoid:
      return dnnl::algorithm::eltwise_logistic_use_dst_for_bwd;
    case ActivationKind::tanh:
      return dnnl::algorithm::eltwise_tanh_use_dst_for_bwd;
    default:
      return dnnl::algorithm::undef;
  }
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
