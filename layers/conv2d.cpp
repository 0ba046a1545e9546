#include "kerascpp/layers/conv2d.hpp"
#include "kerascpp/core/layer_config.hpp"

#include <utility>

#include "check.hpp"
#include "kerascpp/core/random.hpp"
#include "layer_util.hpp"

namespace kerascpp::layers {

Conv2DLayer::Conv2DLayer(std::int64_t filters, Size2D kernel_size, Conv2DOptions options)
    : Layer(options.name), filters_(filters), kernel_size_(kernel_size), options_(std::move(options)) {
  if (!options_.dtype.empty()) set_dtype_policy(options_.dtype);
  KERASCPP_CHECK_VALUE(filters_ > 0, "Conv2D '{}': filters must be positive, got {}", name(), filters_);
  KERASCPP_CHECK_VALUE(kernel_size_.positive(),
                       "Conv2D '{}': kernel_size must be positive, e.g. 3 or {{3, 5}}, got {{{}, {}}}", name(),
                       kernel_size_.height, kernel_size_.width);
  KERASCPP_CHECK_VALUE(options_.strides.positive(), "Conv2D '{}': strides must be positive, got {{{}, {}}}", name(),
                       options_.strides.height, options_.strides.width);
  KERASCPP_CHECK_VALUE(options_.padding == Padding::valid || options_.padding == Padding::same,
                       "Conv2D '{}': padding must be Padding::valid or Padding::same, got {}", name(),
                       static_cast<int>(options_.padding));
  activation_ = detail::kernel_layer_activation(options_.activation, "Conv2D");
  set_input_spec(image_spec());
}

InputSpec Conv2DLayer::image_spec() const {
  return {.ndim = 4,
          .layout = "(batch, height, width, channels)",
          .rank_hint = "add a channel axis with Reshape, e.g. Reshape({28, 28, 1})"};
}

std::vector<Shape> Conv2DLayer::compute_output_shapes(const std::vector<Shape>& in) {
  const Shape& s = in[0];  // (height, width, channels): the input spec holds
  const bool same = options_.padding == Padding::same;
  const std::int64_t kh = kernel_size_.height, kw = kernel_size_.width;
  KERASCPP_CHECK_SHAPE(same || (s[0] >= kh && s[1] >= kw),
                       "{}: kernel {}x{} is larger than the input {} with padding=\"valid\"; use "
                       "Padding::same or a smaller kernel",
                       where(), kh, kw, shape_str(detail::with_batch(-1, s)));
  return {{detail::window_output(s[0], kh, options_.strides.height, same),
           detail::window_output(s[1], kw, options_.strides.width, same), filters_}};
}

Conv2DGeometry Conv2DLayer::geometry_for(std::int64_t h, std::int64_t w) const {
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

void Conv2DLayer::build(const std::vector<Shape>& in) {
  const std::int64_t channels = in[0][2];
  kernel_ = &add_weight("kernel", {kernel_size_.height, kernel_size_.width, channels, filters_},
                        options_.kernel_initializer, true, options_.seed ? *options_.seed : next_random_seed(),
                        options_.kernel_regularizer, options_.kernel_constraint);
  if (options_.use_bias)
    bias_ = &add_weight("bias", {filters_}, options_.bias_initializer, true,
                        options_.seed ? *options_.seed + 1 : next_random_seed(), options_.bias_regularizer,
                        options_.bias_constraint);
  // The kernel is made for this many input channels, as Keras' InputSpec(axes={-1: channels}).
  InputSpec spec = image_spec();
  spec.axes = {{-1, channels}};
  set_input_spec(std::move(spec));
}

std::vector<Tensor> Conv2DLayer::forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) {
  const Tensor& x = in[0];
  const bool same = options_.padding == Padding::same;
  Conv2DGeometry g = geometry_for(x.dim(1), x.dim(2));
  Tensor y({x.dim(0), detail::window_output(x.dim(1), g.kernel_h, g.stride_h, same),
            detail::window_output(x.dim(2), g.kernel_w, g.stride_w, same), filters_},
           st.output_dtype);
  int r = ctx.replica_id;
  // The max pooling after this layer may apply the ReLU to its output instead.
  const ActivationFn act =
      st.output_relu_deferred ? ActivationFn(ActivationKind::linear) : detail::fusable_activation(activation_);
  ctx.backend->conv2d_forward(x, kernel_->value(r), bias_ ? bias_->value(r) : Tensor(), g, act, y);
  return {detail::finish_activation(ctx, activation_, y, st)};
}

std::vector<Tensor> Conv2DLayer::backward(ReplicaContext& ctx, const std::vector<Tensor>& in,
                                          const std::vector<Tensor>& out, const std::vector<Tensor>& grads,
                                          LayerState& st) {
  int r = ctx.replica_id;
  auto [first, db] = detail::take_kernel_bias_grads(where(), *kernel_, bias_, r);
  Conv2DGeometry g = geometry_for(in[0].dim(1), in[0].dim(2));
  // No input gradient for e.g. the first layer (nothing upstream to train): dx stays undefined.
  Tensor dx = st.need_input_grads ? Tensor(in[0].shape(), in[0].dtype()) : Tensor();
  // The max pooling after this layer may have applied the ReLU's backward already.
  const detail::ActivationGrad a = st.output_grad_past_relu
                                       ? detail::ActivationGrad{ActivationKind::linear, out[0], grads[0]}
                                       : detail::op_activation_grad(ctx, activation_, out[0], grads[0], st);
  // And may have summed that gradient per channel, the bias gradient (LayerState); taken only
  // under a float32 compute dtype, where the convolution would sum the same float32 values (a
  // 16-bit one sums the gradient as it rounded it).
  Tensor taken = std::exchange(st.output_grad_channel_sums, Tensor());
  if (ctx.backend->compute_dtype() != DType::float32) taken = Tensor();
  Tensor no_bias;
  ctx.backend->conv2d_backward(a.act, in[0], a.y, a.dy, kernel_->value(r), g, kernel_->grad(r),
                               taken.defined() ? no_bias : db, !first, dx);
  if (db.defined() && taken.defined()) {
    if (first) ctx.backend->copy(taken, db);
    else ctx.backend->add_inplace(db, taken);
  }
  return {dx};
}

Layer::LowPrecisionIO Conv2DLayer::low_precision_io() const { return detail::product_low_precision_io(activation_); }

bool Conv2DLayer::ends_in_relu() const { return activation_ == ActivationKind::relu; }

Json Conv2DLayer::get_config() const {
  detail::Json config = {{"name", name()},
                         {"filters", filters_},
                         {"kernel_size", detail::json_size2d(kernel_size_)},
                         {"strides", detail::json_size2d(options_.strides)},
                         {"padding", padding_name(options_.padding)},
                         {"activation", activation_config_name(activation_, name())},
                         {"use_bias", options_.use_bias}};
  detail::add_weight_options(config, "kernel", options_.kernel_regularizer, options_.kernel_constraint);
  detail::add_weight_options(config, "bias", options_.bias_regularizer, options_.bias_constraint);
  return config;
}

LayerRef Conv2D(std::int64_t filters, Size2D kernel_size, Conv2DOptions options) {
  return std::make_shared<Conv2DLayer>(filters, kernel_size, std::move(options));
}

KERASCPP_REGISTER_LAYER("Conv2D", [](const LayerConfig& c) {
  c.expect_channels_last();
  c.expect_no_dilation();
  c.expect("groups", 1, "no grouped convolutions");
  return layers::Conv2D(
      c.required<std::int64_t>("filters"), c.size2d("kernel_size", 0),
      detail::read_kernel_options(c, layers::Conv2DOptions{.strides = c.size2d("strides", 1), .padding = c.padding()}));
});

}  // namespace kerascpp::layers
