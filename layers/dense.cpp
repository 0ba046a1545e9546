#include "kerascpp/layers/dense.hpp"
#include "kerascpp/core/layer_config.hpp"

#include "check.hpp"
#include "kerascpp/core/random.hpp"
#include "layer_util.hpp"

namespace kerascpp::layers {

DenseLayer::DenseLayer(std::int64_t units, DenseOptions options)
    : Layer(options.name), units_(units), options_(std::move(options)) {
  if (!options_.dtype.empty()) set_dtype_policy(options_.dtype);
  KERASCPP_CHECK_VALUE(units_ > 0, "Dense '{}': units must be positive (the number of outputs), got {}", name(),
                       units_);
  activation_ = detail::kernel_layer_activation(options_.activation, "Dense");
  set_input_spec({.min_ndim = 2,
                  .layout = "(batch, ..., features)",
                  .rank_hint = "Dense needs a feature axis; reshape the input, e.g. Input({1})"});
}

std::vector<Shape> DenseLayer::compute_output_shapes(const std::vector<Shape>& in) {
  Shape out = in[0];  // at least (features): the input spec holds
  out.back() = units_;
  return {out};
}

void DenseLayer::build(const std::vector<Shape>& in) {
  std::int64_t fan_in = in[0].back();
  kernel_ = &add_weight("kernel", {fan_in, units_}, options_.kernel_initializer, true,
                        options_.seed ? *options_.seed : next_random_seed(), options_.kernel_regularizer,
                        options_.kernel_constraint);
  if (options_.use_bias)
    bias_ = &add_weight("bias", {units_}, options_.bias_initializer, true,
                        options_.seed ? *options_.seed + 1 : next_random_seed(), options_.bias_regularizer,
                        options_.bias_constraint);
  // The kernel is made for fan_in features, as Keras' InputSpec(min_ndim=2, axes={-1: input_dim}).
  set_input_spec({.min_ndim = 2, .axes = {{-1, fan_in}}, .layout = "(batch, ..., features)"});
}

std::vector<Tensor> DenseLayer::forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) {
  const Tensor& x = in[0];
  Shape out_shape = x.shape();
  out_shape.back() = units_;
  Tensor y(out_shape, st.output_dtype);
  Tensor x2 = x.reshape({-1, x.dim(-1)});
  Tensor y2 = y.reshape({-1, units_});
  ctx.backend->dense_forward(x2, kernel_->value(ctx.replica_id), bias_ ? bias_->value(ctx.replica_id) : Tensor(),
                             detail::fusable_activation(activation_), y2);
  return {detail::finish_activation(ctx, activation_, y, st)};
}

std::vector<Tensor> DenseLayer::backward(ReplicaContext& ctx, const std::vector<Tensor>& in,
                                         const std::vector<Tensor>& out, const std::vector<Tensor>& grads,
                                         LayerState& st) {
  int r = ctx.replica_id;
  Tensor dz = detail::through_activation(ctx, activation_, out[0], grads[0], st);
  Tensor dz2 = dz.reshape({-1, units_});
  Tensor x2 = in[0].reshape({-1, in[0].dim(-1)});
  bool first = kernel_->take_first_grad(r);
  ctx.backend->matmul(x2, true, dz2, false, kernel_->grad(r), !first);
  if (bias_) {
    bool first_b = bias_->take_first_grad(r);
    ctx.backend->sum_to_last_axis(dz2, bias_->grad(r), !first_b);
  }
  if (!st.need_input_grads) return {Tensor()};  // e.g. the first layer: nothing upstream to train
  Tensor dx(in[0].shape(), in[0].dtype());
  Tensor dx2 = dx.reshape({-1, in[0].dim(-1)});
  ctx.backend->matmul(dz2, false, kernel_->value(r), true, dx2, false);
  return {dx};
}

Layer::LowPrecisionIO DenseLayer::low_precision_io() const { return detail::product_low_precision_io(activation_); }

Json DenseLayer::get_config() const {
  detail::Json config = {{"name", name()},
                         {"units", units_},
                         {"activation", activation_config_name(activation_, name())},
                         {"use_bias", options_.use_bias}};
  detail::add_weight_options(config, "kernel", options_.kernel_regularizer, options_.kernel_constraint);
  detail::add_weight_options(config, "bias", options_.bias_regularizer, options_.bias_constraint);
  return config;
}

LayerRef Dense(std::int64_t units, DenseOptions options) {
  return std::make_shared<DenseLayer>(units, std::move(options));
}

KERASCPP_REGISTER_LAYER("Dense", [](const LayerConfig& c) {
  c.expect("lora_rank", nullptr, "no LoRA");
  return layers::Dense(c.required<std::int64_t>("units"), detail::read_kernel_options(c, layers::DenseOptions{}));
});

}  // namespace kerascpp::layers
