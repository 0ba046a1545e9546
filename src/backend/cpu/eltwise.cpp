// Activations on oneDNN: eltwise (sigmoid, tanh) and softmax over the last axis, forward and
// backward; relu is nan_propagation's, forward and backward (oneDNN's forward turns NaN into 0).
// Backward uses the *_use_dst_for_bwd algorithms: it needs only the forward output y, which
// layers keep anyway.
#include <fmt/format.h>

#include <cstring>

#include "backend/cpu/checks.hpp"
#include "backend/cpu/cpu_backend.hpp"
#include "backend/cpu/dnnl_util.hpp"
#include "backend/cpu/nan_propagation.hpp"

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

std::int64_t softmax_classes(const Tensor& t, const char* op) {
  if (t.rank() < 1)
    throw ShapeError(fmt::format("{}: softmax needs rank >= 1, got shape {}", op, shape_str(t.shape())));
  return t.dim(-1);
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

void CpuBackend::unfused_activation(ActivationKind act, float* y, std::int64_t rows, std::int64_t cols) {
  if (act == ActivationKind::relu) relu_keep_nan(y, rows * cols);
  if (act == ActivationKind::softmax) softmax_rows(y, y, rows, cols);
}

void CpuBackend::unfused_activation(ActivationKind act, Tensor& y, std::int64_t rows, std::int64_t cols,
                                    const char* op) {
  if (y.dtype() == DType::float32) return unfused_activation(act, y.data<float>(), rows, cols);
  if (act == ActivationKind::softmax)
    throw ValueError(
        fmt::format("{}: softmax gives float32 outputs, not {}; pass a float32 y", op, dtype_name(y.dtype())));
  if (act == ActivationKind::relu) relu_keep_nan(static_cast<std::uint16_t*>(y.raw()), y.dtype(), rows * cols);
}

void CpuBackend::activation_forward(ActivationKind act, const Tensor& x, Tensor& y) {
  enter();
  const char* op = "activation_forward";
  if (act == ActivationKind::relu || act == ActivationKind::linear) {  // these two also in 16 bits
    require_activation(x, op, "x");
    prepare_activation(y, x.shape(), x.dtype(), op, "y");
    require_same_dtype(x, "x", y, "y", op, "relu and linear keep their input's dtype");
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
  if (act == ActivationKind::softmax) {
    std::int64_t classes = softmax_classes(x, op);
    softmax_rows(x.data<float>(), y.data<float>(), n / classes, classes);
    return;
  }
  if (act == ActivationKind::relu) {
    relu_keep_nan(x.data<float>(), y.data<float>(), n);  // oneDNN's relu turns NaN into 0
    return;
  }
  cache_.key("eltwise_fwd");
  cache_.append(static_cast<int>(act), n);
  auto& e = cache_.get<EltwiseEntry>([&] {
    return guarded_build(op, cache_.current_key(), [&] {
      dnnl::eltwise_forward::desc desc(dnnl::prop_kind::forward_training, eltwise_forward_alg(act), f32_md({n}, tag::a),
                                       0.f, 0.f);
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

void CpuBackend::activation_backward(ActivationKind act, const Tensor& y, const Tensor& dy, Tensor& dx) {
  enter();
  const char* op = "activation_backward";
  if (act == ActivationKind::relu || act == ActivationKind::linear) {  // these two also in 16 bits
    require_activation(y, op, "y");
    require_activation(dy, op, "dy");
    prepare_activation(dx, y.shape(), dy.dtype(), op, "dx");
    require_same_dtype(y, "y", dy, "dy", op, "a gradient has its activation's dtype");
    require_same_dtype(dy, "dy", dx, "dx", op, "a gradient has its activation's dtype");
  } else {
    require_float(y, op, "y");
    require_float(dy, op, "dy");
    prepare_output(dx, y.shape(), op, "dx");
  }
  require_same_shape(dy, "dy", y, "y", op);
  const std::int64_t n = y.numel();
  if (n == 0) return;
  if (act == ActivationKind::linear) {
    if (dy.raw() != dx.raw()) std::memcpy(dx.raw(), dy.raw(), dy.nbytes());
    return;
  }
  if (act == ActivationKind::relu) {
    if (y.dtype() == DType::float32) relu_backward_keep_nan(y.data<float>(), dy.data<float>(), dx.data<float>(), n);
    else
      relu_backward_keep_nan(static_cast<const std::uint16_t*>(y.raw()), static_cast<const std::uint16_t*>(dy.raw()),
                             static_cast<std::uint16_t*>(dx.raw()), y.dtype(), n);
    return;
  }
  cache_.key("act_bwd");
  cache_.append(static_cast<int>(act), n, y.dim(-1));
  auto& e = cache_.get<EltwiseEntry>([&] {
    return guarded_build(op, cache_.current_key(), [&] {
      auto entry = std::make_unique<EltwiseEntry>();
      if (act == ActivationKind::softmax) {
        std::int64_t classes = softmax_classes(y, op), rows = n / classes;
        auto hint = softmax_forward_pd(rows, classes, base_attr(), engine_);
        auto md = f32_md({rows, classes}, tag::ab);
        dnnl::softmax_backward::desc desc(md, md, 1);
        dnnl::softmax_backward::primitive_desc pd(desc, base_attr(), engine_, hint);
        entry->prim = make_primitive(pd, {DNNL_ARG_DST, DNNL_ARG_DIFF_DST, DNNL_ARG_DIFF_SRC});
      } else {
        auto md = f32_md({n}, tag::a);
        dnnl::eltwise_forward::desc hint_desc(dnnl::prop_kind::forward_training, eltwise_backward_alg(act), md, 0.f,
                                              0.f);
        dnnl::eltwise_forward::primitive_desc hint(hint_desc, base_attr(), engine_);
        dnnl::eltwise_backward::desc desc(eltwise_backward_alg(act), md, md, 0.f, 0.f);
        dnnl::eltwise_backward::primitive_desc pd(desc, base_attr(), engine_, hint);
        entry->prim = make_primitive(pd, {DNNL_ARG_DST, DNNL_ARG_DIFF_DST, DNNL_ARG_DIFF_SRC});
      }
      return entry;
    });
  });
  e.prim.bind(DNNL_ARG_DST, y.raw());
  e.prim.bind(DNNL_ARG_DIFF_DST, dy.raw());
  e.prim.bind(DNNL_ARG_DIFF_SRC, dx.raw());
  run(e.prim);
}

}  // namespace kerascpp::cpu
