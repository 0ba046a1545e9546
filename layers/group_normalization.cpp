// GroupNormalization on existing Backend ops (oneDNN 2.6 has no group normalization primitive;
// it came in 3.3): the groups become rows of layer_norm_forward/backward (no scale or shift), and
// the per-channel gamma and beta are a 1x1 depthwise convolution over (B·S, 1, 1, C) views, which
// computes exactly x̂·gamma + beta per channel and whose backward ops give dgamma, dbeta and dx̂.
#include "kerascpp/layers/group_normalization.hpp"
#include "kerascpp/core/layer_config.hpp"

#include <cmath>

#include "check.hpp"
#include "layer_util.hpp"

namespace kerascpp::layers {

// Saved between forward and backward: [0] the group rows of x, [1] mean, [2] rstd (one per
// row), [3] x̂ in x's layout (for dgamma).

GroupNormalizationLayer::GroupNormalizationLayer(GroupNormalizationOptions options)
    : Layer(options.name), options_(std::move(options)) {
  KERASCPP_CHECK_VALUE(options_.groups > 0 || options_.groups == -1,
                       "GroupNormalization '{}': groups must be positive (or -1 for one group per channel), got {}",
                       name(), options_.groups);
  KERASCPP_CHECK_VALUE(options_.epsilon > 0.f && std::isfinite(options_.epsilon),
                       "GroupNormalization '{}': epsilon must be a positive finite number, got {}", name(),
                       options_.epsilon);
  set_input_spec({.min_ndim = 2,
                  .layout = "(batch, ..., channels)",
                  .rank_hint = "GroupNormalization normalises groups of the last (channel) axis"});
}

std::vector<Shape> GroupNormalizationLayer::compute_output_shapes(const std::vector<Shape>& in) { return {in[0]}; }

void GroupNormalizationLayer::build(const std::vector<Shape>& in) {
  channels_ = in[0].back();
  if (options_.groups == -1) options_.groups = channels_;  // as Keras, which then saves the count
  KERASCPP_CHECK_VALUE(options_.groups <= channels_ && channels_ % options_.groups == 0,
                       "{}: groups ({}) must divide the number of channels ({}) of the input {}", where(),
                       options_.groups, channels_, shape_str(detail::with_batch(-1, in[0])));
  set_input_spec({.min_ndim = 2, .axes = {{-1, channels_}}, .layout = "(batch, ..., channels)"});
  // Keras' creation order (gamma, then beta) is the order of the saved weights.
  if (options_.scale)
    gamma_ = &add_weight("gamma", {channels_}, options_.gamma_initializer, true, 0, options_.gamma_regularizer,
                         options_.gamma_constraint);
  if (options_.center)
    beta_ = &add_weight("beta", {channels_}, options_.beta_initializer, true, 0, options_.beta_regularizer,
                        options_.beta_constraint);
}

namespace {

// The spatial positions of a (batch, ..., channels) shape: the product of the axes between.
std::int64_t spatial_positions(const Shape& shape) {
  std::int64_t s = 1;
  for (std::size_t i = 1; i + 1 < shape.size(); ++i) s *= shape[i];
  return s;
}

}  // namespace

Tensor GroupNormalizationLayer::to_group_rows(ReplicaContext& ctx, const Tensor& x) const {
  const std::int64_t b = x.dim(0), g = options_.groups, cg = channels_ / g, s = spatial_positions(x.shape());
  if (s == 1 || g == 1) return x.reshape({b * g, s * cg});
  Tensor t({b, g, s, cg}, x.dtype());
  ctx.backend->transpose(x.reshape({b, s, g, cg}), {0, 2, 1, 3}, t);
  return t.reshape({b * g, s * cg});
}

Tensor GroupNormalizationLayer::from_group_rows(ReplicaContext& ctx, const Tensor& rows, const Shape& shape) const {
  const std::int64_t b = shape[0], g = options_.groups, cg = channels_ / g, s = spatial_positions(shape);
  if (s == 1 || g == 1) return rows.reshape(shape);
  Tensor t({b, s, g, cg}, rows.dtype());
  ctx.backend->transpose(rows.reshape({b, g, s, cg}), {0, 2, 1, 3}, t);
  return t.reshape(shape);
}

namespace {

// A [.., C] tensor as the NHWC images (rows, 1, 1, C) of a 1x1 depthwise convolution, and a [C]
// vector as its kernel (1, 1, C, 1).
Tensor as_channel_pixels(const Tensor& t) { return t.reshape({t.numel() / t.dim(-1), 1, 1, t.dim(-1)}); }
Tensor as_channel_kernel(const Tensor& v) { return v.reshape({1, 1, v.numel(), 1}); }

}  // namespace

std::vector<Tensor> GroupNormalizationLayer::forward(ReplicaContext& ctx, const std::vector<Tensor>& in,
                                                     LayerState& st) {
  const int r = ctx.replica_id;
  const Tensor& x = in[0];
  const Tensor rows = to_group_rows(ctx, x);
  Tensor normalized_rows(rows.shape());
  Tensor mean, rstd;
  ctx.backend->layer_norm_forward(rows, Tensor(), Tensor(), options_.epsilon, normalized_rows, mean, rstd);
  Tensor normalized = from_group_rows(ctx, normalized_rows, x.shape());
  if (ctx.training) st.saved = {rows, mean, rstd, normalized};
  if (!gamma_ && !beta_) return {normalized};
  if (!gamma_) {  // x̂ is this layer's own tensor (saved[3] is read only with gamma): shifted in place
    ctx.backend->bias_add(normalized, beta_->value(r));
    return {normalized};
  }
  Tensor y(x.shape());
  Tensor y_pixels = as_channel_pixels(y);
  ctx.backend->depthwise_conv2d_forward(as_channel_pixels(normalized), as_channel_kernel(gamma_->value(r)),
                                        beta_ ? beta_->value(r) : Tensor(), Conv2DGeometry{}, ActivationKind::linear,
                                        y_pixels);
  return {y};
}

std::vector<Tensor> GroupNormalizationLayer::backward(ReplicaContext& ctx, const std::vector<Tensor>& in,
                                                      const std::vector<Tensor>&, const std::vector<Tensor>& grads,
                                                      LayerState& st) {
  KERASCPP_CHECK_STATE(st.saved.size() == 4, "{}: backward without a training forward; run forward(training) first",
                       where());
  const int r = ctx.replica_id;
  const Tensor& dy = grads[0];
  Tensor dnormalized = dy;  // the gradient of x̂
  if (gamma_) {
    auto [first, db] = detail::take_kernel_bias_grads(where(), *gamma_, beta_, r);
    Tensor dgamma = as_channel_kernel(gamma_->grad(r));  // a view: the op writes gamma's gradient
    ctx.backend->depthwise_conv2d_backward_weights(as_channel_pixels(st.saved[3]), as_channel_pixels(dy),
                                                   Conv2DGeometry{}, dgamma, db, !first);
    if (st.need_input_grads) {
      dnormalized = Tensor(dy.shape());
      Tensor pixels = as_channel_pixels(dnormalized);
      ctx.backend->depthwise_conv2d_backward_data(as_channel_pixels(dy), as_channel_kernel(gamma_->value(r)),
                                                  Conv2DGeometry{}, pixels);
    }
  } else if (beta_) {
    const bool first = beta_->take_first_grad(r);
    ctx.backend->sum_to_last_axis(dy, beta_->grad(r), !first);
  }
  if (!st.need_input_grads) return {Tensor()};
  const Tensor drows = to_group_rows(ctx, dnormalized);
  Tensor dx_rows(drows.shape());
  Tensor no_dgamma, no_dbeta;  // undefined: not wanted (the layer's own scale and shift are above)
  ctx.backend->layer_norm_backward(drows, st.saved[0], Tensor(), st.saved[1], st.saved[2], dx_rows, no_dgamma,
                                   no_dbeta);
  return {from_group_rows(ctx, dx_rows, in[0].shape())};
}

Json GroupNormalizationLayer::get_config() const {
  Json config = {{"name", name()},
                 {"groups", options_.groups},
                 {"axis", -1},
                 {"epsilon", detail::json_float(options_.epsilon)},
                 {"center", options_.center},
                 {"scale", options_.scale}};
  detail::add_weight_options(config, "beta", options_.beta_regularizer, options_.beta_constraint);
  detail::add_weight_options(config, "gamma", options_.gamma_regularizer, options_.gamma_constraint);
  return config;
}

LayerRef GroupNormalization(GroupNormalizationOptions options) {
  return std::make_shared<GroupNormalizationLayer>(std::move(options));
}

KERASCPP_REGISTER_LAYER("GroupNormalization", [](const LayerConfig& c) {
  c.expect_last_axis(0);
  return layers::GroupNormalization({.groups = c.get<std::int64_t>("groups", 32),
                                     .epsilon = c.get("epsilon", 1e-3f),
                                     .center = c.get("center", true),
                                     .scale = c.get("scale", true),
                                     .beta_regularizer = c.regularizer("beta_regularizer"),
                                     .gamma_regularizer = c.regularizer("gamma_regularizer"),
                                     .beta_constraint = c.constraint("beta_constraint"),
                                     .gamma_constraint = c.constraint("gamma_constraint"),
                                     .name = c.name()});
});

}  // namespace kerascpp::layers
