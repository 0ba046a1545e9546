// Softmax over any one axis (the Softmax layer's `axis`) on oneDNN: x viewed as
// [outer, classes, inner] (softmax_axis_view.hpp) and normalised along axis 1 of that 3-D
// descriptor, so no transpose is needed. Backward from the forward output y
// (dx = y ⊙ (dy − Σ_axis dy ⊙ y)), as the last-axis activation does.
#include <fmt/format.h>

#include "backend/cpu/checks.hpp"
#include "backend/cpu/cpu_backend.hpp"
#include "backend/cpu/dnnl_util.hpp"
#include "backend/softmax_axis_view.hpp"

namespace kerascpp::cpu {

namespace {

struct SoftmaxAxisEntry : CacheEntry {
  CachedPrimitive prim;
};

dnnl::softmax_forward::primitive_desc softmax_axis_pd(const op_shapes::SoftmaxAxisView& v,
                                                      const dnnl::primitive_attr& attr, const dnnl::engine& engine) {
  dnnl::softmax_forward::desc desc(dnnl::prop_kind::forward_training, f32_md({v.outer, v.classes, v.inner}, tag::abc),
                                   1);
  return {desc, attr, engine};
}

}  // namespace

void CpuBackend::softmax_axis_forward(const Tensor& x, int axis, Tensor& y) {
  enter();
  const char* op = "softmax_axis_forward";
  require_float(x, op, "x");
  const auto v = op_shapes::softmax_axis_view(x, axis, op);
  prepare_output(y, x.shape(), op, "y");
  if (x.numel() == 0) return;
  fit_threads(x.numel(), kSerialElements);
  cache_.key("softmax_axis_fwd");
  cache_.append(v.outer, v.classes, v.inner);
  auto& e = cache_.get<SoftmaxAxisEntry>([&] {
    return guarded_build(op, cache_.current_key(), [&] {
      auto entry = std::make_unique<SoftmaxAxisEntry>();
      entry->prim = make_primitive(softmax_axis_pd(v, base_attr(), engine_), {DNNL_ARG_SRC, DNNL_ARG_DST});
      return entry;
    });
  });
  e.prim.bind(DNNL_ARG_SRC, x.raw());
  e.prim.bind(DNNL_ARG_DST, y.raw());
  run(e.prim);
}

void CpuBackend::softmax_axis_backward(const Tensor& y, const Tensor& dy, int axis, Tensor& dx) {
  enter();
  const char* op = "softmax_axis_backward";
  require_float(y, op, "y");
  require_float(dy, op, "dy");
  require_same_shape(dy, "dy", y, "y", op);
  const auto v = op_shapes::softmax_axis_view(y, axis, op);
  prepare_output(dx, y.shape(), op, "dx");
  if (y.numel() == 0) return;
  fit_threads(y.numel(), kSerialElements);
  cache_.key("softmax_axis_bwd");
  cache_.append(v.outer, v.classes, v.inner);
  auto& e = cache_.get<SoftmaxAxisEntry>([&] {
    return guarded_build(op, cache_.current_key(), [&] {
      auto hint = softmax_axis_pd(v, base_attr(), engine_);
      auto md = f32_md({v.outer, v.classes, v.inner}, tag::abc);
      dnnl::softmax_backward::desc desc(md, md, 1);
      dnnl::softmax_backward::primitive_desc pd(desc, base_attr(), engine_, hint);
      auto entry = std::make_unique<SoftmaxAxisEntry>();
      entry->prim = make_primitive(pd, {DNNL_ARG_DST, DNNL_ARG_DIFF_DST, DNNL_ARG_DIFF_SRC});
      return entry;
    });
  });
  e.prim.bind(DNNL_ARG_DST, y.raw());
  e.prim.bind(DNNL_ARG_DIFF_DST, dy.raw());
  e.prim.bind(DNNL_ARG_DIFF_SRC, dx.raw());
  run(e.prim);
}

}  // namespace kerascpp::cpu
