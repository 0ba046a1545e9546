#include "kerascpp/layers/layer_normalization.hpp"
#include "kerascpp/core/layer_config.hpp"

#include <cmath>

#include "check.hpp"
#include "layer_util.hpp"

namespace kerascpp::layers {

// Saved state between forward and backward: [0] mean, [1] rstd, one per row (example).

LayerNormalizationLayer::LayerNormalizationLayer(LayerNormalizationOptions options)
    : Layer(options.name), options_(std::move(options)) {
  KERASCPP_CHECK_VALUE(options_.epsilon > 0.f && std::isfinite(options_.epsilon),
                       "LayerNormalization '{}': epsilon must be a positive finite number, got {}", name(),
                       options_.epsilon);
  set_input_spec({.min_ndim = 2,
                  .layout = "(batch, ..., features)",
                  .rank_hint = "LayerNormalization normalises the last (feature) axis"});
}

std::vector<Shape> LayerNormalizationLayer::compute_output_shapes(const std::vector<Shape>& in) { return {in[0]}; }

void LayerNormalizationLayer::build(const std::vector<Shape>& in) {
  features_ = in[0].back();
  // Built for this many features; any rank (>= 2) with that last axis, so one layer may serve
  // inputs of several ranks as in Keras.
  set_input_spec({.min_ndim = 2, .axes = {{-1, features_}}, .layout = "(batch, ..., features)"});
  // Keras' creation order (gamma, then beta) is the order of the saved weights.
  if (options_.scale) gamma_ = &add_weight("gamma", {features_}, "ones", true, 0);
  if (options_.center) beta_ = &add_weight("beta", {features_}, "zeros", true, 0);
}

std::vector<Tensor> LayerNormalizationLayer::forward(ReplicaContext& ctx, const std::vector<Tensor>& in,
                                                     LayerState& st) {
  int r = ctx.replica_id;
  const Tensor& x = in[0];
  Tensor x2 = x.reshape({-1, features_});
  Tensor y(x.shape());
  Tensor y2 = y.reshape({-1, features_});
  Tensor mean, rstd;
  ctx.backend->layer_norm_forward(x2, gamma_ ? gamma_->value(r) : Tensor(), beta_ ? beta_->value(r) : Tensor(),
                                  options_.epsilon, y2, mean, rstd);
  if (ctx.training) st.saved = {mean, rstd};
  return {y};
}

std::vector<Tensor> LayerNormalizationLayer::backward(ReplicaContext& ctx, const std::vector<Tensor>& in,
                                                      const std::vector<Tensor>&, const std::vector<Tensor>& grads,
                                                      LayerState& st) {
  int r = ctx.replica_id;
  Tensor x2 = in[0].reshape({-1, features_});
  Tensor dy2 = grads[0].reshape({-1, features_});
  Tensor dx(in[0].shape());
  Tensor dx2 = dx.reshape({-1, features_});
  Tensor dgamma, dbeta;  // undefined: not wanted
  if (gamma_) dgamma = Tensor({features_});
  if (beta_) dbeta = Tensor({features_});
  ctx.backend->layer_norm_backward(dy2, x2, gamma_ ? gamma_->value(r) : Tensor(), st.saved.at(0), st.saved.at(1), dx2,
                                   dgamma, dbeta);
  for (auto [var_ptr, g] : {std::pair{gamma_, &dgamma}, std::pair{beta_, &dbeta}}) {
    if (!var_ptr) continue;
    if (var_ptr->take_first_grad(r)) var_ptr->grad(r).copy_from(*g);
    else ctx.backend->add_inplace(var_ptr->grad(r), *g);
  }
  return {dx};
}

Json LayerNormalizationLayer::get_config() const {
  return detail::Json({{"name", name()},
                       {"axis", std::vector<int>{-1}},  // Keras writes the built layer's axis as a list
                       {"epsilon", detail::json_float(options_.epsilon)},
                       {"center", options_.center},
                       {"scale", options_.scale}});
}

LayerRef LayerNormalization(LayerNormalizationOptions options) {
  return std::make_shared<LayerNormalizationLayer>(std::move(options));
}

KERASCPP_REGISTER_LAYER("LayerNormalization", [](const LayerConfig& c) {
  c.expect_last_axis(0);
  c.expect("rms_scaling", false, "mean and variance normalization");
  return layers::LayerNormalization({.epsilon = c.get("epsilon", 1e-3f),
                                     .center = c.get("center", true),
                                     .scale = c.get("scale", true),
                                     .name = c.name()});
});

}  // namespace kerascpp::layers
