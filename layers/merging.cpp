#include "kerascpp/layers/merging.hpp"
#include "kerascpp/core/layer_config.hpp"

#include "check.hpp"
#include "layer_util.hpp"

namespace kerascpp::layers {

std::string ElementwiseMergeLayer::class_name() const {
  switch (op_) {
    case MergeOp::subtract:
      return "Subtract";
    case MergeOp::multiply:
      return "Multiply";
    case MergeOp::average:
      return "Average";
    case MergeOp::maximum:
      return "Maximum";
    case MergeOp::minimum:
      return "Minimum";
    case MergeOp::add:
      break;
  }
  return "Add";
}

std::vector<Shape> ElementwiseMergeLayer::compute_output_shapes(const std::vector<Shape>& in) {
  KERASCPP_CHECK_VALUE(in.size() >= 2, "{}: needs at least 2 inputs, got {}", where(), in.size());
  KERASCPP_CHECK_VALUE(op_ != MergeOp::subtract || in.size() == 2,
                       "{}: needs exactly 2 inputs (it computes a - b), got {}", where(), in.size());
  for (std::size_t i = 1; i < in.size(); ++i)
    KERASCPP_CHECK_SHAPE(in[i] == in[0], "{}: inputs must have equal shapes, but input 0 is {} and input {} is {}",
                         where(), shape_str(detail::with_batch(-1, in[0])), i,
                         shape_str(detail::with_batch(-1, in[i])));
  return {in[0]};
}

namespace {
// x * factor as a new tensor (the input stays as it is: another layer may hold it).
Tensor scaled(Backend& backend, const Tensor& x, float factor) {
  Tensor y = x.clone();
  backend.scale(y, factor);
  return y;
}

// The product of every input but `skip` (all of them when skip is out of range), times `seed`.
Tensor product(Backend& backend, const std::vector<Tensor>& in, std::size_t skip, const Tensor& seed) {
  Tensor acc = seed;
  for (std::size_t j = 0; j < in.size(); ++j) {
    if (j == skip) continue;
    Tensor next(in[0].shape());
    backend.multiply(acc, in[j], next);
    acc = next;
  }
  return acc;
}

// Maximum and Minimum as a max pooling, so that they run on the Backend's pooling primitive
// (oneDNN, cuDNN) with no op of their own: the n inputs, each viewed as a column [M, 1], are
// concatenated into [M, n], seen as an NHWC image (1, M, n, 1) and max-pooled over windows of
// 1 x n; the minimum is the negated maximum of the negated inputs (negation is exact). The
// pooling's backward sends each output's gradient to one argmax (on ties, one input takes it all).
struct ExtremumGeometry {
  Shape stacked;  // (1, M, n, 1)
  Pool2DGeometry pool;
};
ExtremumGeometry extremum_geometry(const std::vector<Tensor>& in) {
  const auto n = static_cast<std::int64_t>(in.size());
  ExtremumGeometry g{{1, in[0].numel(), n, 1}, {}};
  g.pool.kind = PoolKind::max;
  g.pool.pool_h = g.pool.stride_h = 1;
  g.pool.pool_w = g.pool.stride_w = n;
  return g;
}

// The inputs side by side as (1, M, n, 1), each negated for the minimum.
Tensor stack_columns(Backend& be, const std::vector<Tensor>& in, bool negate) {
  std::vector<Tensor> columns;
  for (const Tensor& x : in)
    columns.push_back(negate ? scaled(be, x, -1.f).reshape({x.numel(), 1}) : x.reshape({x.numel(), 1}));
  Tensor stacked({in[0].numel(), static_cast<std::int64_t>(in.size())});
  be.concat(columns, 1, stacked);
  return stacked.reshape({1, in[0].numel(), static_cast<std::int64_t>(in.size()), 1});
}

Tensor extremum_forward(ReplicaContext& ctx, const std::vector<Tensor>& in, bool minimum, LayerState& st) {
  Backend& be = *ctx.backend;
  const ExtremumGeometry g = extremum_geometry(in);
  Tensor stacked = stack_columns(be, in, minimum);
  Tensor y({1, in[0].numel(), 1, 1});
  st.saved.clear();
  if (ctx.training) {
    Tensor workspace;
    be.pool2d_forward(stacked, g.pool, y, workspace);
    st.saved = {stacked, workspace};
  } else {
    be.pool2d_forward_inference(stacked, g.pool, y);
  }
  if (minimum) be.scale(y, -1.f);
  return y.reshape(in[0].shape());
}

std::vector<Tensor> extremum_backward(ReplicaContext& ctx, const std::vector<Tensor>& in, const Tensor& dy,
                                      bool minimum, LayerState& st) {
  Backend& be = *ctx.backend;
  const ExtremumGeometry g = extremum_geometry(in);
  if (st.saved.empty()) {  // a backward after a forward without training (Model::forward): pool again
    Tensor y({1, in[0].numel(), 1, 1}), workspace;
    Tensor stacked = stack_columns(be, in, minimum);
    be.pool2d_forward(stacked, g.pool, y, workspace);
    st.saved = {stacked, workspace};
  }
  Tensor dstacked(g.stacked);
  const Tensor dpool = (minimum ? scaled(be, dy, -1.f) : dy).reshape({1, in[0].numel(), 1, 1});
  be.pool2d_backward(dpool, st.saved[0], g.pool, st.saved[1], dstacked);
  std::vector<Tensor> columns;
  for (std::size_t i = 0; i < in.size(); ++i) columns.emplace_back(Shape{in[0].numel(), 1});
  be.split(dstacked.reshape({in[0].numel(), static_cast<std::int64_t>(in.size())}), 1, columns);
  std::vector<Tensor> dxs;
  for (Tensor& c : columns) {
    if (minimum) be.scale(c, -1.f);
    dxs.push_back(c.reshape(in[0].shape()));
  }
  return dxs;
}
}  // namespace

std::vector<Tensor> ElementwiseMergeLayer::forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) {
  Backend& be = *ctx.backend;
  Tensor y(in[0].shape());
  switch (op_) {
    case MergeOp::add:
      be.add(in, y);
      break;
    case MergeOp::subtract:  // -b + a: the same bits as a - b (negation is exact)
      y = scaled(be, in[1], -1.f);
      be.add_inplace(y, in[0]);
      break;
    case MergeOp::multiply:
      y = product(be, {in.begin() + 1, in.end()}, in.size(), in[0]);
      break;
    case MergeOp::average:
      be.add(in, y);
      be.scale(y, 1.f / static_cast<float>(in.size()));
      break;
    case MergeOp::maximum:
    case MergeOp::minimum:
      y = extremum_forward(ctx, in, op_ == MergeOp::minimum, st);
      break;
  }
  return {y};
}

std::vector<Tensor> ElementwiseMergeLayer::backward(ReplicaContext& ctx, const std::vector<Tensor>& in,
                                                    const std::vector<Tensor>&, const std::vector<Tensor>& grads,
                                                    LayerState& st) {
  Backend& be = *ctx.backend;
  const Tensor& dy = grads[0];
  switch (op_) {
    case MergeOp::add:  // d(sum)/d(input_i) is the identity: every input receives the same tensor
      return std::vector<Tensor>(in.size(), dy);
    case MergeOp::subtract:
      return {dy, scaled(be, dy, -1.f)};
    case MergeOp::average:
      return std::vector<Tensor>(in.size(), scaled(be, dy, 1.f / static_cast<float>(in.size())));
    case MergeOp::multiply: {
      std::vector<Tensor> dxs;
      for (std::size_t i = 0; i < in.size(); ++i) dxs.push_back(product(be, in, i, dy));
      return dxs;
    }
    case MergeOp::maximum:
    case MergeOp::minimum:
      return extremum_backward(ctx, in, dy, op_ == MergeOp::minimum, st);
  }
  return {};
}

namespace {

// The AND of the defined masks (Keras' Merge.compute_mask); a mask shared by every masked input
// (a residual branch around a layer that keeps its input's mask) is passed on as it is.
Tensor and_of_masks(ReplicaContext& ctx, const std::vector<Tensor>& masks) {
  Tensor out;
  for (const Tensor& m : masks) {
    if (!m.defined() || (out.defined() && out.raw() == m.raw())) continue;
    if (!out.defined()) {
      out = m;
    } else {
      Tensor both;
      ctx.backend->mask_and(out, m, both);
      out = both;
    }
  }
  return out;
}

}  // namespace

std::vector<Tensor> ElementwiseMergeLayer::compute_output_masks(ReplicaContext& ctx, const std::vector<Tensor>&,
                                                                const std::vector<Tensor>&, const LayerState& st) {
  return {and_of_masks(ctx, st.input_masks)};
}

namespace {
int normalise_axis(int axis, std::size_t rank_with_batch, const std::string& where) {
  int r = static_cast<int>(rank_with_batch);
  int a = axis < 0 ? axis + r : axis;
  KERASCPP_CHECK_VALUE(a > 0 && a < r,
                       "{}: axis {} is out of range for inputs of rank {} (the batch axis 0 cannot be "
                       "concatenated)",
                       where, axis, r);
  return a;
}
}  // namespace

std::vector<Shape> ConcatenateLayer::compute_output_shapes(const std::vector<Shape>& in) {
  KERASCPP_CHECK_VALUE(in.size() >= 2, "{}: needs at least 2 inputs, got {}", where(), in.size());
  int a = normalise_axis(axis_, in[0].size() + 1, where()) - 1;  // per-example axis
  Shape out = in[0];
  for (std::size_t i = 1; i < in.size(); ++i) {
    bool ok = in[i].size() == in[0].size();
    for (std::size_t d = 0; ok && d < in[0].size(); ++d)
      if (static_cast<int>(d) != a && in[i][d] != in[0][d]) ok = false;
    KERASCPP_CHECK_SHAPE(ok,
                         "{}: inputs must match on every axis except axis {}, but input 0 is {} and input {} "
                         "is {}",
                         where(), axis_, shape_str(detail::with_batch(-1, in[0])), i,
                         shape_str(detail::with_batch(-1, in[i])));
    out[static_cast<std::size_t>(a)] += in[i][static_cast<std::size_t>(a)];
  }
  return {out};
}

std::vector<Tensor> ConcatenateLayer::forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState&) {
  int a = normalise_axis(axis_, static_cast<std::size_t>(in[0].rank()), where());
  Shape out = in[0].shape();
  for (std::size_t i = 1; i < in.size(); ++i) out[static_cast<std::size_t>(a)] += in[i].dim(a);
  Tensor y(out);
  ctx.backend->concat(in, a, y);
  return {y};
}

std::vector<Tensor> ConcatenateLayer::backward(ReplicaContext& ctx, const std::vector<Tensor>& in,
                                               const std::vector<Tensor>&, const std::vector<Tensor>& grads,
                                               LayerState&) {
  int a = normalise_axis(axis_, static_cast<std::size_t>(in[0].rank()), where());
  std::vector<Tensor> dxs;
  for (auto& x : in) dxs.emplace_back(x.shape());
  ctx.backend->split(grads[0], a, dxs);
  return dxs;
}

std::vector<Tensor> ConcatenateLayer::compute_output_masks(ReplicaContext& ctx, const std::vector<Tensor>& in,
                                                           const std::vector<Tensor>&, const LayerState& st) {
  if (st.input_masks.empty()) return {Tensor()};
  // Keras concatenates the masks along the axis and reduces over the last: for the feature axis
  // that is the AND of the step masks. Concatenating along a step axis would join the masks.
  KERASCPP_CHECK_VALUE(normalise_axis(axis_, static_cast<std::size_t>(in[0].rank()), where()) == in[0].rank() - 1,
                       "{}: concatenating masked inputs along axis {} (a step axis) is not "
                       "supported yet; concatenate along the last axis, or drop the mask "
                       "(mask_zero = false) before this layer",
                       where(), axis_);
  return {and_of_masks(ctx, st.input_masks)};
}

Json ConcatenateLayer::get_config() const { return detail::Json({{"name", name()}, {"axis", axis_}}); }

LayerRef Add(AddOptions options) { return std::make_shared<ElementwiseMergeLayer>(std::move(options)); }
LayerRef Subtract(AddOptions options) {
  return std::make_shared<ElementwiseMergeLayer>(std::move(options), MergeOp::subtract);
}
LayerRef Multiply(AddOptions options) {
  return std::make_shared<ElementwiseMergeLayer>(std::move(options), MergeOp::multiply);
}
LayerRef Average(AddOptions options) {
  return std::make_shared<ElementwiseMergeLayer>(std::move(options), MergeOp::average);
}
LayerRef Maximum(AddOptions options) {
  return std::make_shared<ElementwiseMergeLayer>(std::move(options), MergeOp::maximum);
}
LayerRef Minimum(AddOptions options) {
  return std::make_shared<ElementwiseMergeLayer>(std::move(options), MergeOp::minimum);
}
LayerRef Concatenate(int axis, ConcatenateOptions options) {
  return std::make_shared<ConcatenateLayer>(axis, std::move(options));
}

// Keras' Add, Subtract, Multiply, Average, Maximum and Minimum configs hold only the name.
KERASCPP_REGISTER_LAYER("Add", [](const LayerConfig& c) { return Add({.name = c.name()}); });
KERASCPP_REGISTER_LAYER("Subtract", [](const LayerConfig& c) { return Subtract({.name = c.name()}); });
KERASCPP_REGISTER_LAYER("Multiply", [](const LayerConfig& c) { return Multiply({.name = c.name()}); });
KERASCPP_REGISTER_LAYER("Average", [](const LayerConfig& c) { return Average({.name = c.name()}); });
KERASCPP_REGISTER_LAYER("Maximum", [](const LayerConfig& c) { return Maximum({.name = c.name()}); });
KERASCPP_REGISTER_LAYER("Minimum", [](const LayerConfig& c) { return Minimum({.name = c.name()}); });
KERASCPP_REGISTER_LAYER("Concatenate", [](const LayerConfig& c) {
  return layers::Concatenate(c.get("axis", -1), {.name = c.name()});
});

}  // namespace kerascpp::layers
