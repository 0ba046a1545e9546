// GlobalMax/GlobalAveragePooling1D/2D/3D: one 2-D pooling whose window is the whole input, viewed
// as the image (B, P, W, C) with W the last spatial axis and P the product of the others.
// GlobalAveragePooling1D over a masked sequence is a weighted sum instead (below).
#include "kerascpp/core/layer_config.hpp"
#include "kerascpp/layers/pooling.hpp"

#include "check.hpp"
#include "layer_util.hpp"
#include "pool_steps.hpp"

namespace kerascpp::layers {

GlobalPoolingLayer::GlobalPoolingLayer(PoolKind kind, int spatial_rank, GlobalPoolingOptions options)
    : Layer(std::move(options.name)), kind_(kind), spatial_rank_(spatial_rank), keepdims_(options.keepdims) {
  KERASCPP_CHECK_VALUE(spatial_rank_ >= 1 && spatial_rank_ <= 3, "Global pooling '{}': 1 to 3 spatial axes, got {}",
                       name(), spatial_rank_);
  set_input_spec(detail::spatial_spec(static_cast<std::size_t>(spatial_rank_)));
}

std::string GlobalPoolingLayer::class_name() const {
  return (kind_ == PoolKind::max ? "GlobalMaxPooling" : "GlobalAveragePooling") + std::to_string(spatial_rank_) + "D";
}

std::vector<Shape> GlobalPoolingLayer::compute_output_shapes(const std::vector<Shape>& in) {
  if (!keepdims_) return {{in[0].back()}};
  Shape out(static_cast<std::size_t>(spatial_rank_), 1);
  out.push_back(in[0].back());
  return {out};
}

namespace {

Pool2DGeometry global_geometry(const Tensor& image, PoolKind kind) {
  Pool2DGeometry g;
  g.kind = kind;
  g.pool_h = g.stride_h = image.dim(1);
  g.pool_w = g.stride_w = image.dim(2);
  return g;
}

// x (B, spatial..., C) viewed as the image (B, P, W, C).
Tensor as_image(const Tensor& x) {
  std::int64_t p = 1;
  for (int a = 1; a < x.rank() - 2; ++a) p *= x.dim(a);
  return x.reshape({x.dim(0), p, x.dim(-2), x.dim(-1)});
}

// Keras' GlobalAveragePooling1D with a mask: the mean over the unmasked steps. The weights
// w[b, t] = mask[b, t] / Σ_t mask[b, t] are a softmax over the steps of 0 (kept) or -1e9 (masked,
// exp underflows to exactly 0), so y[b] = w[b] · x[b] is one batched product with no division op.
// Masked steps are also zeroed, so a wholly masked sequence gives 0 (Keras divides 0 by 0: NaN).
// st.saved[0] keeps w for the backward, dx[b, t] = w[b, t]·dy[b] (0 at masked steps).
Tensor masked_step_weights(Backend& be, const Tensor& x, const Tensor& mask, const std::string& where) {
  KERASCPP_CHECK_VALUE(mask.rank() == 2 && mask.dim(0) == x.dim(0) && mask.dim(1) == x.dim(1),
                       "{}: the input's mask {} does not match its (batch, steps) {}", where, shape_str(mask.shape()),
                       shape_str({x.dim(0), x.dim(1)}));
  Tensor logits = Tensor::zeros({x.dim(0), x.dim(1)});
  be.masked_fill(logits, mask, -1e9f);
  Tensor w;
  be.softmax_axis_forward(logits, -1, w);
  return w;
}

}  // namespace

bool GlobalPoolingLayer::masked_mean(const LayerState& st) const {
  return kind_ == PoolKind::average && spatial_rank_ == 1 && !st.input_masks.empty() && st.input_masks[0].defined();
}

std::vector<Tensor> GlobalPoolingLayer::forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) {
  const Tensor& x = in[0];
  Shape out = detail::with_batch(x.dim(0), compute_output_shapes({Shape(x.shape().begin() + 1, x.shape().end())})[0]);
  if (masked_mean(st)) {
    Backend& be = *ctx.backend;
    const Tensor& mask = st.input_masks[0];
    Tensor w = masked_step_weights(be, x, mask, where());
    Tensor kept = x.clone();
    Tensor rows = kept.reshape({x.dim(0) * x.dim(1), x.dim(2)});
    be.masked_fill(rows, mask.reshape({mask.numel()}), 0.f);
    Tensor y;
    be.batched_matmul(w.reshape({x.dim(0), 1, x.dim(1)}), false, kept, false, y, false);
    st.saved = {w};
    return {y.reshape(out)};
  }
  Tensor image = as_image(x);
  Tensor y({x.dim(0), 1, 1, x.dim(-1)});
  detail::pool_forward(ctx, image, global_geometry(image, kind_), false, y, st);
  return {y.reshape(out)};
}

std::vector<Tensor> GlobalPoolingLayer::backward(ReplicaContext& ctx, const std::vector<Tensor>& in,
                                                 const std::vector<Tensor>&, const std::vector<Tensor>& grads,
                                                 LayerState& st) {
  const Tensor& x = in[0];
  const Tensor dy = grads[0].reshape({x.dim(0), 1, x.dim(-1)});
  if (masked_mean(st)) {
    const Tensor w = st.saved.empty() ? masked_step_weights(*ctx.backend, x, st.input_masks[0], where()) : st.saved[0];
    Tensor dx;
    ctx.backend->batched_matmul(w.reshape({x.dim(0), 1, x.dim(1)}), true, dy, false, dx, false);
    // Masked steps were zeroed before the product: no gradient (w is uniform on a wholly masked row).
    Tensor rows = dx.reshape({x.dim(0) * x.dim(1), x.dim(2)});
    ctx.backend->masked_fill(rows, st.input_masks[0].reshape({st.input_masks[0].numel()}), 0.f);
    return {dx};
  }
  Tensor image = as_image(x);
  Tensor dx(image.shape());
  const Pool2DGeometry g = global_geometry(image, kind_);
  ctx.backend->pool2d_backward(dy.reshape({x.dim(0), 1, 1, x.dim(-1)}), image, g,
                               detail::pool_backward_workspace(ctx, image, g, false, st), dx);
  return {dx.reshape(x.shape())};
}

Json GlobalPoolingLayer::get_config() const {
  return detail::Json({{"name", name()}, {"data_format", "channels_last"}, {"keepdims", keepdims_}});
}

LayerRef GlobalAveragePooling1D(GlobalPoolingOptions options) {
  return std::make_shared<GlobalPoolingLayer>(PoolKind::average, 1, std::move(options));
}
LayerRef GlobalAveragePooling2D(GlobalPoolingOptions options) {
  return std::make_shared<GlobalPoolingLayer>(PoolKind::average, 2, std::move(options));
}
LayerRef GlobalAveragePooling3D(GlobalPoolingOptions options) {
  return std::make_shared<GlobalPoolingLayer>(PoolKind::average, 3, std::move(options));
}
LayerRef GlobalMaxPooling1D(GlobalPoolingOptions options) {
  return std::make_shared<GlobalPoolingLayer>(PoolKind::max, 1, std::move(options));
}
LayerRef GlobalMaxPooling2D(GlobalPoolingOptions options) {
  return std::make_shared<GlobalPoolingLayer>(PoolKind::max, 2, std::move(options));
}
LayerRef GlobalMaxPooling3D(GlobalPoolingOptions options) {
  return std::make_shared<GlobalPoolingLayer>(PoolKind::max, 3, std::move(options));
}

namespace {
template <PoolKind Kind, int Rank>
LayerRef global_from_config(const LayerConfig& c) {
  c.expect_channels_last();
  return std::make_shared<GlobalPoolingLayer>(
      Kind, Rank, GlobalPoolingOptions{.keepdims = c.get("keepdims", false), .name = c.name()});
}
}  // namespace

KERASCPP_REGISTER_LAYER("GlobalAveragePooling1D", (global_from_config<PoolKind::average, 1>));
KERASCPP_REGISTER_LAYER("GlobalAveragePooling2D", (global_from_config<PoolKind::average, 2>));
KERASCPP_REGISTER_LAYER("GlobalAveragePooling3D", (global_from_config<PoolKind::average, 3>));
KERASCPP_REGISTER_LAYER("GlobalMaxPooling1D", (global_from_config<PoolKind::max, 1>));
KERASCPP_REGISTER_LAYER("GlobalMaxPooling2D", (global_from_config<PoolKind::max, 2>));
KERASCPP_REGISTER_LAYER("GlobalMaxPooling3D", (global_from_config<PoolKind::max, 3>));

}  // namespace kerascpp::layers
