#include "kerascpp/layers/depthwise_conv2d.hpp"
#include "kerascpp/core/layer_config.hpp"

#include "check.hpp"
#include "kerascpp/core/random.hpp"
#include "layer_util.hpp"

namespace kerascpp::layers {

DepthwiseConv2DLayer::DepthwiseConv2DLayer(Size2D kernel_size, DepthwiseConv2DOptions options)
    : Layer(options.name), kernel_size_(kernel_size), options_(std::move(options)) {
  KERASCPP_CHECK_VALUE(kernel_size_.positive(),
                       "DepthwiseConv2D '{}': kernel_size must be positive, e.g. 3 or {{3, 5}}, got {{{}, {}}}", name(),
                       kernel_size_.height, kernel_size_.width);
  KERASCPP_CHECK_VALUE(options_.strides.positive(), "DepthwiseConv2D '{}': strides must be positive, got {{{}, {}}}",
                       name(), options_.strides.height, options_.strides.width);
  KERASCPP_CHECK_VALUE(options_.depth_multiplier > 0, "DepthwiseConv2D '{}': depth_multiplier must be positive, got {}",
                       name(), options_.depth_multiplier);
  KERASCPP_CHECK_VALUE(options_.padding == Padding::valid || options_.padding == Padding::same,
                       "DepthwiseConv2D '{}': padding must be Padding::valid or Padding::same, got \"{}\"", name(),
                       padding_name(options_.padding));
  activation_ = detail::kernel_layer_activation(options_.activation, "DepthwiseConv2D");
  set_input_spec(detail::nhwc_image_spec());
}

std::vector<Shape> DepthwiseConv2DLayer::compute_output_shapes(const std::vector<Shape>& in) {
  const Shape& s = in[0];
  const bool same = options_.padding == Padding::same;
  const std::int64_t kh = kernel_size_.height, kw = kernel_size_.width;
  KERASCPP_CHECK_SHAPE(same || (s[0] >= kh && s[1] >= kw),
                       "{}: kernel {}x{} is larger than the input {} with padding=\"valid\"; use "
                       "Padding::same or a smaller kernel",
                       where(), kh, kw, shape_str(detail::with_batch(-1, s)));
  return {{detail::window_output(s[0], kh, options_.strides.height, same),
           detail::window_output(s[1], kw, options_.strides.width, same), s[2] * options_.depth_multiplier}};
}

Conv2DGeometry DepthwiseConv2DLayer::geometry_for(std::int64_t h, std::int64_t w) const {
  Conv2DGeometry g;
  g.kernel_h = kernel_size_.height;
  g.kernel_w = kernel_size_.width;
  g.stride_h = options_.strides.height;
  g.stride_w = options_.strides.width;
  if (options_.padding == Padding::same) {
    detail::same_padding(h, g.kernel_h, g.stride_h, g.pad_top, g.pad_bottom);
    detail::same_padding(w, g.kernel_w, g.stride_w, g.pad_left, g.pad_right);
  }
  return g;
}

void DepthwiseConv2DLayer::build(const std::vector<Shape>& in) {
  const std::int64_t channels = in[0][2], m = options_.depth_multiplier;
  kernel_ = &add_weight("depthwise_kernel", {kernel_size_.height, kernel_size_.width, channels, m},
                        options_.depthwise_initializer, true, options_.seed ? *options_.seed : next_random_seed(),
                        options_.depthwise_regularizer, options_.depthwise_constraint);
  if (options_.use_bias)
    bias_ = &add_weight("bias", {channels * m}, options_.bias_initializer, true,
                        options_.seed ? *options_.seed + 1 : next_random_seed(), options_.bias_regularizer,
                        options_.bias_constraint);
  InputSpec spec = detail::nhwc_image_spec();
  spec.axes = {{-1, channels}};
  set_input_spec(std::move(spec));
}

std::vector<Tensor> DepthwiseConv2DLayer::forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) {
  const Tensor& x = in[0];
  const bool same = options_.padding == Padding::same;
  Conv2DGeometry g = geometry_for(x.dim(1), x.dim(2));
  Tensor y({x.dim(0), detail::window_output(x.dim(1), g.kernel_h, g.stride_h, same),
            detail::window_output(x.dim(2), g.kernel_w, g.stride_w, same), x.dim(3) * options_.depth_multiplier});
  int r = ctx.replica_id;
  ctx.backend->depthwise_conv2d_forward(x, kernel_->value(r), bias_ ? bias_->value(r) : Tensor(), g,
                                        detail::fusable_activation(activation_), y);
  return {detail::finish_activation(ctx, activation_, y, st)};
}

std::vector<Tensor> DepthwiseConv2DLayer::backward(ReplicaContext& ctx, const std::vector<Tensor>& in,
                                                   const std::vector<Tensor>& out, const std::vector<Tensor>& grads,
                                                   LayerState& st) {
  int r = ctx.replica_id;
  Tensor dz = detail::through_activation(ctx, activation_, out[0], grads[0], st);
  auto [first, db] = detail::take_kernel_bias_grads(where(), *kernel_, bias_, r);
  Conv2DGeometry g = geometry_for(in[0].dim(1), in[0].dim(2));
  ctx.backend->depthwise_conv2d_backward_weights(in[0], dz, g, kernel_->grad(r), db, !first);
  if (!st.need_input_grads) return {Tensor()};
  Tensor dx(in[0].shape());
  ctx.backend->depthwise_conv2d_backward_data(dz, kernel_->value(r), g, dx);
  return {dx};
}

Json DepthwiseConv2DLayer::get_config() const {
  detail::Json config = {{"name", name()},
                         {"depth_multiplier", options_.depth_multiplier},
                         {"kernel_size", detail::json_size2d(kernel_size_)},
                         {"strides", detail::json_size2d(options_.strides)},
                         {"padding", padding_name(options_.padding)},
                         {"dilation_rate", detail::Json::array({1, 1})},
                         {"activation", activation_config_name(activation_, name())},
                         {"use_bias", options_.use_bias}};
  detail::add_weight_options(config, "depthwise", options_.depthwise_regularizer, options_.depthwise_constraint);
  detail::add_weight_options(config, "bias", options_.bias_regularizer, options_.bias_constraint);
  return config;
}

LayerRef DepthwiseConv2D(Size2D kernel_size, DepthwiseConv2DOptions options) {
  return std::make_shared<DepthwiseConv2DLayer>(kernel_size, std::move(options));
}

KERASCPP_REGISTER_LAYER("DepthwiseConv2D", [](const LayerConfig& c) {
  c.expect_channels_last();
  c.expect_no_dilation();
  return layers::DepthwiseConv2D(c.size2d("kernel_size", 0),
                                 {.strides = c.size2d("strides", 1),
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
