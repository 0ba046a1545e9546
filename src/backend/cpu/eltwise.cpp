// Elementwise activations on oneDNN's eltwise algorithms where it has one (dnnl_util.hpp's
// table), forward and backward; the rest by the scalar formulas (activation_formulas.hpp);
// relu is nan_propagation's, forward and backward (oneDNN's forward turns NaN into 0). Backward
// from the output y where the activation allows it (the *_use_dst_for_bwd algorithms), so layers
// keep nothing more; from the input x otherwise. The axis-wise ones: activation_axis.cpp.
#include <fmt/format.h>

#include <cstring>

#include "backend/cpu/checks.hpp"
#include "backend/cpu/cpu_backend.hpp"
#include "backend/cpu/dnnl_util.hpp"
#include "backend/cpu/nan_propagation.hpp"
#include "backend/cpu/parallel.hpp"
#include "backend/softmax_axis_view.hpp"
#include "check.hpp"

namespace kerascpp::cpu {

namespace {

struct EltwiseEntry : CacheEntry {
  CachedPrimitive prim;
};

dnnl::softmax_forward::primitive_desc softmax_forward_pd(std::int64_t rows, std::int64_t classes,
                                                         const dnnl::primitive_attr& attr, const dnnl::engine& engine) {
  dnnl::softmax_forward::desc desc(dnnl::prop_kind::forward_training, f32_md({rows, classes}, tag::ab), 1);
  return {desc, attr, engine};
}

}  // namespace

void CpuBackend::softmax_rows(const float* x, float* y, std::int64_t rows, std::int64_t classes) {
  if (rows == 0 || classes == 0) return;
  cache_.key("softmax_fwd");
  cache_.append(rows, classes);
  auto& e = cache_.get<EltwiseEntry>([&] {
    return guarded_build("softmax", cache_.current_key(), [&] {
      auto pd = softmax_forward_pd(rows, classes, base_attr(), engine_);
      auto entry = std::make_unique<EltwiseEntry>();
      entry->prim = make_primitive(pd, {DNNL_ARG_SRC, DNNL_ARG_DST});
      return entry;
    });
  });
  // Rows to turn NaN are found before oneDNN runs: y may alias x.
  softmax_nan_rows(x, rows, classes, nan_rows_);
  e.prim.bind(DNNL_ARG_SRC, x);
  e.prim.bind(DNNL_ARG_DST, y);
  run(e.prim);
  fill_rows_nan(y, nan_rows_, classes);
}

void CpuBackend::unfused_activation(const ActivationFn& act, float* y, std::int64_t rows, std::int64_t cols) {
  if (act == ActivationKind::linear || fused_post_op(act)) return;
  if (act == ActivationKind::relu) return relu_keep_nan(y, rows * cols);
  // Along the last axis (unfused_activation(Tensor&) checked): the fibres are the rows.
  const op_shapes::SoftmaxAxisView rows_view{rows, cols, 1};
  if (act.kind == ActivationKind::softmax) return softmax_rows(y, y, rows, cols);
  if (act.kind == ActivationKind::log_softmax) return log_softmax_fibres(y, y, rows_view);
  if (act.kind == ActivationKind::sparsemax) return sparsemax_fibres(y, y, rows_view);
  eltwise_by_formula(act, y, y, rows * cols);
}

void CpuBackend::unfused_activation(const ActivationFn& act, Tensor& y, std::int64_t rows, std::int64_t cols,
                                    const char* op) {
  KERASCPP_CHECK_VALUE(!act.changes_shape() && (!act.along_axis() || act.axis == -1 || act.axis == y.rank() - 1),
                       "{}: {} along axis {} cannot follow a matmul or convolution in place (it works along "
                       "the last axis and keeps the shape); apply it with activation_forward",
                       op, activation_name(act), act.axis);
  if (y.dtype() == DType::float32) return unfused_activation(act, y.data<float>(), rows, cols);
  if (act == ActivationKind::relu) return relu_keep_nan(static_cast<std::uint16_t*>(y.raw()), y.dtype(), rows * cols);
  if (act == ActivationKind::linear || fused_post_op(act)) return;
  throw ValueError(fmt::format("{}: {} gives float32 outputs, not {}; pass a float32 y", op, activation_name(act),
                               dtype_name(y.dtype())));
}

void CpuBackend::eltwise_by_formula(const ActivationFn& act, const float* x, float* y, std::int64_t n) {
  fit_threads(n, kSerialElements);
  parallel_for(n, kElementGrain, [&](std::int64_t i0, std::int64_t i1) {
    for (std::int64_t i = i0; i < i1; ++i) y[i] = act_formula::value(act.kind, act.alpha, act.beta, act.gamma, x[i]);
  });
}

void CpuBackend::eltwise_backward_by_formula(const ActivationFn& act, const float* v, const float* dy, float* dx,
                                             std::int64_t n) {
  const bool from_y = act.gradient_from_output();
  fit_threads(n, kSerialElements);
  parallel_for(n, kElementGrain, [&](std::int64_t i0, std::int64_t i1) {
    for (std::int64_t i = i0; i < i1; ++i)
      dx[i] = dy[i] * act_formula::slope(act.kind, act.alpha, act.beta, act.gamma, v[i], from_y);
  });
}

void CpuBackend::activation_forward(const ActivationFn& act, const Tensor& x, Tensor& y) {
  enter();
  const char* op = "activation_forward";
  if (act == ActivationKind::relu || act == ActivationKind::linear) {  // these two also in 16 bits
    require_activation(x, op, "x");
    prepare_activation(y, x.shape(), x.dtype(), op, "y");
    require_same_dtype(x, "x", y, "y", op, "relu and linear keep their input's dtype");
  } else if (act.along_axis()) {
    return activation_along_axis(act, x, y);
  } else {
    require_float(x, op, "x");
    prepare_output(y, x.shape(), op, "y");
  }
  const std::int64_t n = x.numel();
  if (n == 0) return;
  if (act == ActivationKind::linear) {
    if (x.raw() != y.raw()) std::memcpy(y.raw(), x.raw(), x.nbytes());
    return;
  }
  if (act == ActivationKind::relu && x.dtype() != DType::float32) {
    if (x.raw() != y.raw()) std::memcpy(y.raw(), x.raw(), x.nbytes());
    relu_keep_nan(static_cast<std::uint16_t*>(y.raw()), y.dtype(), n);
    return;
  }
  if (act == ActivationKind::relu) {
    relu_keep_nan(x.data<float>(), y.data<float>(), n);  // oneDNN's relu turns NaN into 0
    return;
  }
  const EltwiseAlg alg = eltwise_forward_alg(act);
  if (!alg.found() || alg.scale != 1.f) return eltwise_by_formula(act, x.data<float>(), y.data<float>(), n);
  cache_.key("eltwise_fwd");
  cache_.append(static_cast<int>(alg.alg), alg.alpha, alg.beta, n);
  auto& e = cache_.get<EltwiseEntry>([&] {
    return guarded_build(op, cache_.current_key(), [&] {
      dnnl::eltwise_forward::desc desc(dnnl::prop_kind::forward_training, alg.alg, f32_md({n}, tag::a), alg.alpha,
                                       alg.beta);
      dnnl::eltwise_forward::primitive_desc pd(desc, base_attr(), engine_);
      auto entry = std::make_unique<EltwiseEntry>();
      entry->prim = make_primitive(pd, {DNNL_ARG_SRC, DNNL_ARG_DST});
      return entry;
    });
  });
  e.prim.bind(DNNL_ARG_SRC, x.raw());
  e.prim.bind(DNNL_ARG_DST, y.raw());
  run(e.prim);
}

void CpuBackend::activation_backward(const ActivationFn& act, const Tensor& x, const Tensor& y, const Tensor& dy,
                                     Tensor& dx) {
  enter();
  const char* op = "activation_backward";
  const bool from_y = act.gradient_from_output();
  KERASCPP_CHECK_VALUE((from_y ? y : x).defined(),
                       "{}: {} computes its gradient from its {}, which is undefined; pass it", op,
                       activation_name(act), from_y ? "output y" : "input x");
  if (act.along_axis()) return activation_backward_along_axis(act, x, y, dy, dx);
  const Tensor& v = from_y ? y : x;  // what the derivative is computed from
  const char* v_name = from_y ? "y" : "x";
  if (act == ActivationKind::relu || act == ActivationKind::linear) {  // these two also in 16 bits
    require_activation(v, op, v_name);
    require_activation(dy, op, "dy");
    prepare_activation(dx, v.shape(), dy.dtype(), op, "dx");
    require_same_dtype(v, v_name, dy, "dy", op, "a gradient has its activation's dtype");
    require_same_dtype(dy, "dy", dx, "dx", op, "a gradient has its activation's dtype");
  } else {
    require_float(v, op, v_name);
    require_float(dy, op, "dy");
    prepare_output(dx, v.shape(), op, "dx");
  }
  require_same_shape(dy, "dy", v, v_name, op);
  const std::int64_t n = v.numel();
  if (n == 0) return;
  if (act == ActivationKind::linear) {
    if (dy.raw() != dx.raw()) std::memcpy(dx.raw(), dy.raw(), dy.nbytes());
    return;
  }
  if (act == ActivationKind::relu) {  // y > 0 exactly where x > 0: either serves
    if (v.dtype() == DType::float32) relu_backward_keep_nan(v.data<float>(), dy.data<float>(), dx.data<float>(), n);
    else
      relu_backward_keep_nan(static_cast<const std::uint16_t*>(v.raw()), static_cast<const std::uint16_t*>(dy.raw()),
                             static_cast<std::uint16_t*>(dx.raw()), v.dtype(), n);
    return;
  }
  const EltwiseAlg alg = eltwise_backward_alg(act);
  if (!alg.found()) return eltwise_backward_by_formula(act, v.data<float>(), dy.data<float>(), dx.data<float>(), n);
  const int v_arg = uses_dst_for_bwd(alg.alg) ? DNNL_ARG_DST : DNNL_ARG_SRC;
  cache_.key("act_bwd");
  cache_.append(static_cast<int>(alg.alg), alg.alpha, alg.beta, n);
  auto& e = cache_.get<EltwiseEntry>([&] {
    return guarded_build(op, cache_.current_key(), [&] {
      auto entry = std::make_unique<EltwiseEntry>();
      auto md = f32_md({n}, tag::a);
      dnnl::eltwise_forward::desc hint_desc(dnnl::prop_kind::forward_training, alg.alg, md, alg.alpha, alg.beta);
      dnnl::eltwise_forward::primitive_desc hint(hint_desc, base_attr(), engine_);
      dnnl::eltwise_backward::desc desc(alg.alg, md, md, alg.alpha, alg.beta);
      dnnl::eltwise_backward::primitive_desc pd(desc, base_attr(), engine_, hint);
      entry->prim = make_primitive(pd, {v_arg, DNNL_ARG_DIFF_DST, DNNL_ARG_DIFF_SRC});
      return entry;
    });
  });
  e.prim.bind(v_arg, v.raw());
  e.prim.bind(DNNL_ARG_DIFF_DST, dy.raw());
  e.prim.bind(DNNL_ARG_DIFF_SRC, dx.raw());
  run(e.prim);
}

}  // namespace kerascpp::cpu
