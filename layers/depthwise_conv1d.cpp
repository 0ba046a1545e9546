#include "kerascpp/layers/depthwise_conv1d.hpp"
#include "kerascpp/core/layer_config.hpp"

#include "check.hpp"
#include "kerascpp/core/random.hpp"
#include "layer_util.hpp"

namespace kerascpp::layers {

DepthwiseConv1DLayer::DepthwiseConv1DLayer(std::int64_t kernel_size, DepthwiseConv1DOptions options)
    : Layer(options.name), kernel_size_(kernel_size), options_(std::move(options)) {
  KERASCPP_CHECK_VALUE(kernel_size_ > 0, "DepthwiseConv1D '{}': kernel_size must be positive, got {}", name(),
                       kernel_size_);
  KERASCPP_CHECK_VALUE(options_.strides > 0, "DepthwiseConv1D '{}': strides must be positive, got {}", name(),
                       options_.strides);
  KERASCPP_CHECK_VALUE(options_.depth_multiplier > 0, "DepthwiseConv1D '{}': depth_multiplier must be positive, got {}",
                       name(), options_.depth_multiplier);
  KERASCPP_CHECK_VALUE(options_.padding == Padding::valid || options_.padding == Padding::same,
                       "DepthwiseConv1D '{}': padding must be Padding::valid or Padding::same, got \"{}\"", name(),
                       padding_name(options_.padding));
  activation_ = detail::kernel_layer_activation(options_.activation, "DepthwiseConv1D");
  set_input_spec(sequence_spec());
}

InputSpec DepthwiseConv1DLayer::sequence_spec() const { return detail::sequence_conv_spec(); }

std::int64_t DepthwiseConv1DLayer::output_steps(std::int64_t steps) const {
  return detail::window_output(steps, kernel_size_, options_.strides, options_.padding == Padding::same);
}

std::vector<Shape> DepthwiseConv1DLayer::compute_output_shapes(const std::vector<Shape>& in) {
  const Shape& s = in[0];  // (steps, channels): the input spec holds
  KERASCPP_CHECK_SHAPE(options_.padding == Padding::same || s[0] >= kernel_size_,
                       "{}: kernel_size {} is larger than the input {} ({} steps) with padding=\"valid\"; use "
                       "Padding::same or a smaller kernel",
                       where(), kernel_size_, shape_str(detail::with_batch(-1, s)), s[0]);
  return {{output_steps(s[0]), s[1] * options_.depth_multiplier}};
}

Conv2DGeometry DepthwiseConv1DLayer::geometry_for(std::int64_t steps) const {
  Conv2DGeometry g;
  g.kernel_h = 1;
  g.kernel_w = kernel_size_;
  g.stride_w = options_.strides;
  if (options_.padding == Padding::same) detail::same_padding(steps, kernel_size_, g.stride_w, g.pad_left, g.pad_right);
  return g;
}

void DepthwiseConv1DLayer::build(const std::vector<Shape>& in) {
  const std::int64_t channels = in[0][1], m = options_.depth_multiplier;
  kernel_ = &add_weight("depthwise_kernel", {kernel_size_, channels, m}, options_.depthwise_initializer, true,
                        options_.seed ? *options_.seed : next_random_seed(), options_.depthwise_regularizer,
                        options_.depthwise_constraint);
  if (options_.use_bias)
    bias_ = &add_weight("bias", {channels * m}, options_.bias_initializer, true,
                        options_.seed ? *options_.seed + 1 : next_random_seed(), options_.bias_regularizer,
                        options_.bias_constraint);
  InputSpec spec = sequence_spec();
  spec.axes = {{-1, channels}};
  set_input_spec(std::move(spec));
}

std::vector<Tensor> DepthwiseConv1DLayer::forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) {
  const Tensor& x = in[0];
  Tensor y({x.dim(0), output_steps(x.dim(1)), x.dim(2) * options_.depth_multiplier});
  Tensor y2 = detail::sequence_as_image(y);
  int r = ctx.replica_id;
  ctx.backend->depthwise_conv2d_forward(detail::sequence_as_image(x), detail::kernel_1d_as_2d(kernel_->value(r)),
                                        bias_ ? bias_->value(r) : Tensor(), geometry_for(x.dim(1)),
                                        detail::fusable_activation(activation_), y2);
  return {detail::finish_activation(ctx, activation_, y, st)};
}

std::vector<Tensor> DepthwiseConv1DLayer::backward(ReplicaContext& ctx, const std::vector<Tensor>& in,
                                                   const std::vector<Tensor>& out, const std::vector<Tensor>& grads,
                                                   LayerState& st) {
  int r = ctx.replica_id;
  Tensor dz = detail::through_activation(ctx, activation_, out[0], grads[0], st);
  auto [first, db] = detail::take_kernel_bias_grads(where(), *kernel_, bias_, r);
  const Conv2DGeometry g = geometry_for(in[0].dim(1));
  Tensor dw = detail::kernel_1d_as_2d(kernel_->grad(r));  // a view: the op writes the kernel's gradient
  ctx.backend->depthwise_conv2d_backward_weights(detail::sequence_as_image(in[0]), detail::sequence_as_image(dz), g, dw,
                                                 db, !first);
  if (!st.need_input_grads) return {Tensor()};
  Tensor dx(in[0].shape());
  Tensor dx2 = detail::sequence_as_image(dx);
  ctx.backend->depthwise_conv2d_backward_data(detail::sequence_as_image(dz), detail::kernel_1d_as_2d(kernel_->value(r)),
                                              g, dx2);
  return {dx};
}

Json DepthwiseConv1DLayer::get_config() const {
  detail::Json config = {{"name", name()},
                         {"depth_multiplier", options_.depth_multiplier},
                         {"kernel_size", detail::Json::array({kernel_size_})},
                         {"strides", detail::Json::array({options_.strides})},
                         {"padding", padding_name(options_.padding)},
                         {"data_format", "channels_last"},
                         {"dilation_rate", detail::Json::array({1})},
                         {"activation", activation_config_name(activation_, name())},
                         {"use_bias", options_.use_bias}};
  detail::add_weight_options(config, "depthwise", options_.depthwise_regularizer, options_.depthwise_constraint);
  detail::add_weight_options(config, "bias", options_.bias_regularizer, options_.bias_constraint);
  return config;
}

LayerRef DepthwiseConv1D(std::int64_t kernel_size, DepthwiseConv1DOptions options) {
  return std::make_shared<DepthwiseConv1DLayer>(kernel_size, std::move(options));
}

KERASCPP_REGISTER_LAYER("DepthwiseConv1D", [](const LayerConfig& c) {
  c.expect_channels_last();
  c.expect_no_dilation();
  return layers::DepthwiseConv1D(c.size1d("kernel_size", 0),
                                 {.strides = c.size1d("strides", 1),
                                  .padding = c.padding(),
                                  .depth_multiplier = c.get<std::int64_t>("depth_multiplier", 1),
                                  .activation = c.str("activation", "linear"),
                                  .use_bias = c.get("use_bias", true),
                                  .depthwise_regularizer = c.regularizer("depthwise_regularizer"),
                                  .bias_regularizer = c.regularizer("bias_regularizer"),
                                  .depthwise_constraint = c.constraint("depthwise_constraint"),
                                  .bias_constraint = c.constraint("bias_constraint"),
                                  .name = c.name()});
});

}  // namespace kerascpp::layers
