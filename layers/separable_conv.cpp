// SeparableConv1D/2D on the Backend's depthwise and 1x1 convolution ops (oneDNN, cuDNN): no op of
// their own. The depthwise output t is kept for the backward pass, which runs the pointwise
// convolution's backward (its activation fused) and then the depthwise one's from dL/dt.
#include "kerascpp/layers/separable_conv.hpp"
#include "kerascpp/core/layer_config.hpp"

#include "check.hpp"
#include "kerascpp/core/random.hpp"
#include "layer_util.hpp"

namespace kerascpp::layers {

namespace {

const char* separable_class(int rank) { return rank == 1 ? "SeparableConv1D" : "SeparableConv2D"; }

// Keras' config value of a size: [k] for the 1-D layer, [h, w] for the 2-D one.
Json separable_json_size(int rank, Size2D s) { return rank == 1 ? Json::array({s.width}) : detail::json_size2d(s); }

// The pointwise kernel (1..., C·M, F) as the HWIO kernel of a 1x1 Conv2D.
Tensor as_pointwise_2d(const Tensor& w) { return w.reshape({1, 1, w.dim(-2), w.dim(-1)}); }

}  // namespace

SeparableConvLayer::SeparableConvLayer(int rank, std::int64_t filters, Size2D kernel_size,
                                       SeparableConv2DOptions options)
    : Layer(options.name), rank_(rank), filters_(filters), kernel_size_(kernel_size), options_(std::move(options)) {
  const char* cls = separable_class(rank_);
  KERASCPP_CHECK_VALUE(rank_ == 1 || rank_ == 2, "SeparableConv '{}': rank must be 1 or 2, got {}", name(), rank_);
  KERASCPP_CHECK_VALUE(filters_ > 0, "{} '{}': filters must be positive, got {}", cls, name(), filters_);
  KERASCPP_CHECK_VALUE(kernel_size_.positive(), "{} '{}': kernel_size must be positive, got {}", cls, name(),
                       separable_json_size(rank_, kernel_size_).dump());
  KERASCPP_CHECK_VALUE(options_.strides.positive(), "{} '{}': strides must be positive, got {}", cls, name(),
                       separable_json_size(rank_, options_.strides).dump());
  KERASCPP_CHECK_VALUE(options_.depth_multiplier > 0, "{} '{}': depth_multiplier must be positive, got {}", cls, name(),
                       options_.depth_multiplier);
  KERASCPP_CHECK_VALUE(options_.padding == Padding::valid || options_.padding == Padding::same,
                       "{} '{}': padding must be Padding::valid or Padding::same, got \"{}\"", cls, name(),
                       padding_name(options_.padding));
  activation_ = detail::kernel_layer_activation(options_.activation, cls);
  set_input_spec(spec());
}

InputSpec SeparableConvLayer::spec() const {
  return rank_ == 2 ? detail::nhwc_image_spec() : detail::sequence_conv_spec();
}

Tensor SeparableConvLayer::as_image(const Tensor& t) const { return rank_ == 2 ? t : detail::sequence_as_image(t); }

std::vector<Shape> SeparableConvLayer::compute_output_shapes(const std::vector<Shape>& in) {
  const Shape& s = in[0];  // rank 2: (h, w, c); rank 1: (steps, c)
  const bool same = options_.padding == Padding::same;
  const std::int64_t h = rank_ == 2 ? s[0] : 1, w = s[rank_ - 1];
  KERASCPP_CHECK_SHAPE(same || (h >= kernel_size_.height && w >= kernel_size_.width),
                       "{}: kernel_size {} is larger than the input {} with padding=\"valid\"; use Padding::same or "
                       "a smaller kernel",
                       where(), separable_json_size(rank_, kernel_size_).dump(), shape_str(detail::with_batch(-1, s)));
  const std::int64_t out_w = detail::window_output(w, kernel_size_.width, options_.strides.width, same);
  if (rank_ == 1) return {{out_w, filters_}};
  return {{detail::window_output(h, kernel_size_.height, options_.strides.height, same), out_w, filters_}};
}

Conv2DGeometry SeparableConvLayer::geometry_for(std::int64_t h, std::int64_t w) const {
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

void SeparableConvLayer::build(const std::vector<Shape>& in) {
  const std::int64_t channels = in[0].back(), m = options_.depth_multiplier;
  Shape depthwise_shape =
      rank_ == 2 ? Shape{kernel_size_.height, kernel_size_.width, channels, m} : Shape{kernel_size_.width, channels, m};
  Shape pointwise_shape = rank_ == 2 ? Shape{1, 1, channels * m, filters_} : Shape{1, channels * m, filters_};
  const std::uint64_t seed = options_.seed ? *options_.seed : next_random_seed();
  depthwise_ = &add_weight("depthwise_kernel", depthwise_shape, options_.depthwise_initializer, true, seed,
                           options_.depthwise_regularizer, options_.depthwise_constraint);
  pointwise_ = &add_weight("pointwise_kernel", pointwise_shape, options_.pointwise_initializer, true,
                           options_.seed ? *options_.seed + 1 : next_random_seed(), options_.pointwise_regularizer,
                           options_.pointwise_constraint);
  if (options_.use_bias)
    bias_ = &add_weight("bias", {filters_}, options_.bias_initializer, true,
                        options_.seed ? *options_.seed + 2 : next_random_seed(), options_.bias_regularizer,
                        options_.bias_constraint);
  InputSpec s = spec();
  s.axes = {{-1, channels}};
  set_input_spec(std::move(s));
}

std::vector<Tensor> SeparableConvLayer::forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) {
  const Tensor x = as_image(in[0]);
  const int r = ctx.replica_id;
  const Conv2DGeometry g = geometry_for(x.dim(1), x.dim(2));
  const bool same = options_.padding == Padding::same;
  const std::int64_t oh = detail::window_output(x.dim(1), g.kernel_h, g.stride_h, same),
                     ow = detail::window_output(x.dim(2), g.kernel_w, g.stride_w, same);
  const Tensor dw = depthwise_->value(r).reshape({g.kernel_h, g.kernel_w, x.dim(3), options_.depth_multiplier});
  Tensor t({x.dim(0), oh, ow, x.dim(3) * options_.depth_multiplier});
  ctx.backend->depthwise_conv2d_forward(x, dw, Tensor(), g, ActivationKind::linear, t);
  Tensor z(rank_ == 2 ? Shape{x.dim(0), oh, ow, filters_} : Shape{x.dim(0), ow, filters_});
  Tensor z_image = as_image(z);
  ctx.backend->conv2d_forward(t, as_pointwise_2d(pointwise_->value(r)), bias_ ? bias_->value(r) : Tensor(),
                              Conv2DGeometry{}, detail::fusable_activation(activation_), z_image);
  Tensor y = detail::finish_activation(ctx, activation_, z, st);  // st.saved: {} or {z}
  if (activation_.gradient_from_output()) st.saved.clear();
  st.saved.push_back(t);  // the depthwise output, last
  return {y};
}

std::vector<Tensor> SeparableConvLayer::backward(ReplicaContext& ctx, const std::vector<Tensor>& in,
                                                 const std::vector<Tensor>& out, const std::vector<Tensor>& grads,
                                                 LayerState& st) {
  KERASCPP_CHECK_STATE(!st.saved.empty(), "{}: backward without its forward; run forward first", where());
  const int r = ctx.replica_id;
  const Tensor x = as_image(in[0]);
  const Tensor t = st.saved.back();
  const Conv2DGeometry g = geometry_for(x.dim(1), x.dim(2));
  const Shape depthwise_2d{g.kernel_h, g.kernel_w, x.dim(3), options_.depth_multiplier};

  // The pointwise convolution: its kernel and bias gradients, and dL/dt.
  auto [first, db] = detail::take_kernel_bias_grads(where(), *pointwise_, bias_, r);
  Tensor dpw = as_pointwise_2d(pointwise_->grad(r));  // a view: the op writes the kernel's gradient
  Tensor dt(t.shape());
  const detail::ActivationGrad a = detail::op_activation_grad(ctx, activation_, out[0], grads[0], st);
  ctx.backend->conv2d_backward(a.act, t, as_image(a.y), as_image(a.dy), as_pointwise_2d(pointwise_->value(r)),
                               Conv2DGeometry{}, dpw, db, !first, dt);

  // The depthwise convolution, from dL/dt.
  const bool depthwise_first = depthwise_->take_first_grad(r);
  Tensor ddw = depthwise_->grad(r).reshape(depthwise_2d);
  Tensor no_bias;
  ctx.backend->depthwise_conv2d_backward_weights(x, dt, g, ddw, no_bias, !depthwise_first);
  if (!st.need_input_grads) return {Tensor()};
  Tensor dx(in[0].shape());
  Tensor dx_image = as_image(dx);
  ctx.backend->depthwise_conv2d_backward_data(dt, depthwise_->value(r).reshape(depthwise_2d), g, dx_image);
  return {dx};
}

Json SeparableConvLayer::get_config() const {
  detail::Json config = {{"name", name()},
                         {"depth_multiplier", options_.depth_multiplier},
                         {"filters", filters_},
                         {"kernel_size", separable_json_size(rank_, kernel_size_)},
                         {"strides", separable_json_size(rank_, options_.strides)},
                         {"padding", padding_name(options_.padding)},
                         {"data_format", "channels_last"},
                         {"dilation_rate", separable_json_size(rank_, 1)},
                         {"activation", activation_config_name(activation_, name())},
                         {"use_bias", options_.use_bias}};
  detail::add_weight_options(config, "depthwise", options_.depthwise_regularizer, options_.depthwise_constraint);
  detail::add_weight_options(config, "pointwise", options_.pointwise_regularizer, options_.pointwise_constraint);
  detail::add_weight_options(config, "bias", options_.bias_regularizer, options_.bias_constraint);
  return config;
}

LayerRef SeparableConv2D(std::int64_t filters, Size2D kernel_size, SeparableConv2DOptions options) {
  return std::make_shared<SeparableConvLayer>(2, filters, kernel_size, std::move(options));
}

LayerRef SeparableConv1D(std::int64_t filters, std::int64_t kernel_size, SeparableConv1DOptions o) {
  // The 2-D layer over (batch, 1, steps, channels): a 1 x kernel_size window, 1 x strides steps.
  return std::make_shared<SeparableConvLayer>(
      1, filters, Size2D(1, kernel_size),
      SeparableConv2DOptions{.strides = {1, o.strides},
                             .padding = o.padding,
                             .depth_multiplier = o.depth_multiplier,
                             .activation = std::move(o.activation),
                             .use_bias = o.use_bias,
                             .depthwise_initializer = std::move(o.depthwise_initializer),
                             .pointwise_initializer = std::move(o.pointwise_initializer),
                             .bias_initializer = std::move(o.bias_initializer),
                             .depthwise_regularizer = std::move(o.depthwise_regularizer),
                             .pointwise_regularizer = std::move(o.pointwise_regularizer),
                             .bias_regularizer = std::move(o.bias_regularizer),
                             .depthwise_constraint = std::move(o.depthwise_constraint),
                             .pointwise_constraint = std::move(o.pointwise_constraint),
                             .bias_constraint = std::move(o.bias_constraint),
                             .seed = o.seed,
                             .name = std::move(o.name)});
}

namespace {

// The settings both ranks read alike from a config (all but the sizes).
SeparableConv2DOptions read_separable_options(const LayerConfig& c) {
  c.expect_channels_last();
  c.expect_no_dilation();
  return {.padding = c.padding(),
          .depth_multiplier = c.get<std::int64_t>("depth_multiplier", 1),
          .activation = c.str("activation", "linear"),
          .use_bias = c.get("use_bias", true),
          .depthwise_regularizer = c.regularizer("depthwise_regularizer"),
          .pointwise_regularizer = c.regularizer("pointwise_regularizer"),
          .bias_regularizer = c.regularizer("bias_regularizer"),
          .depthwise_constraint = c.constraint("depthwise_constraint"),
          .pointwise_constraint = c.constraint("pointwise_constraint"),
          .bias_constraint = c.constraint("bias_constraint"),
          .name = c.name()};
}

}  // namespace

KERASCPP_REGISTER_LAYER("SeparableConv2D", [](const LayerConfig& c) {
  SeparableConv2DOptions o = read_separable_options(c);
  o.strides = c.size2d("strides", 1);
  return LayerRef(std::make_shared<SeparableConvLayer>(2, c.required<std::int64_t>("filters"),
                                                       c.size2d("kernel_size", 0), std::move(o)));
});

KERASCPP_REGISTER_LAYER("SeparableConv1D", [](const LayerConfig& c) {
  SeparableConv2DOptions o = read_separable_options(c);
  o.strides = {1, c.size1d("strides", 1)};
  return LayerRef(std::make_shared<SeparableConvLayer>(1, c.required<std::int64_t>("filters"),
                                                       Size2D(1, c.size1d("kernel_size", 0)), std::move(o)));
});

}  // namespace kerascpp::layers
