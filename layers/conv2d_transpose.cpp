#include "kerascpp/layers/conv2d_transpose.hpp"
#include "kerascpp/core/layer_config.hpp"

#include "check.hpp"
#include "kerascpp/core/random.hpp"
#include "layer_util.hpp"

namespace kerascpp::layers {

Conv2DTransposeLayer::Conv2DTransposeLayer(std::int64_t filters, Size2D kernel_size, Conv2DTransposeOptions options)
    : Layer(options.name), filters_(filters), kernel_size_(kernel_size), options_(std::move(options)) {
  KERASCPP_CHECK_VALUE(filters_ > 0, "Conv2DTranspose '{}': filters must be positive, got {}", name(), filters_);
  KERASCPP_CHECK_VALUE(kernel_size_.positive(),
                       "Conv2DTranspose '{}': kernel_size must be positive, e.g. 3 or {{3, 5}}, got {{{}, {}}}", name(),
                       kernel_size_.height, kernel_size_.width);
  KERASCPP_CHECK_VALUE(options_.strides.positive(), "Conv2DTranspose '{}': strides must be positive, got {{{}, {}}}",
                       name(), options_.strides.height, options_.strides.width);
  KERASCPP_CHECK_VALUE(options_.padding == Padding::valid || options_.padding == Padding::same,
                       "Conv2DTranspose '{}': padding must be Padding::valid or Padding::same, got \"{}\"", name(),
                       padding_name(options_.padding));
  activation_ = detail::kernel_layer_activation(options_.activation, "Conv2DTranspose");
  set_input_spec(detail::nhwc_image_spec());
}

std::vector<Shape> Conv2DTransposeLayer::compute_output_shapes(const std::vector<Shape>& in) {
  const Shape& s = in[0];
  const bool same = options_.padding == Padding::same;
  return {{detail::transpose_output(s[0], kernel_size_.height, options_.strides.height, same),
           detail::transpose_output(s[1], kernel_size_.width, options_.strides.width, same), filters_}};
}

Conv2DGeometry Conv2DTransposeLayer::geometry_for(std::int64_t h, std::int64_t w) const {
  const bool same = options_.padding == Padding::same;
  Conv2DGeometry g;
  g.kernel_h = kernel_size_.height;
  g.kernel_w = kernel_size_.width;
  g.stride_h = options_.strides.height;
  g.stride_w = options_.strides.width;
  detail::transpose_padding(h, detail::transpose_output(h, g.kernel_h, g.stride_h, same), g.kernel_h, g.stride_h, same,
                            g.pad_top, g.pad_bottom);
  detail::transpose_padding(w, detail::transpose_output(w, g.kernel_w, g.stride_w, same), g.kernel_w, g.stride_w, same,
                            g.pad_left, g.pad_right);
  return g;
}

void Conv2DTransposeLayer::build(const std::vector<Shape>& in) {
  const std::int64_t channels = in[0][2];
  // (kh, kw, filters, in_channels): the HWIO kernel of the Conv2D from our output to our input.
  kernel_ = &add_weight("kernel", {kernel_size_.height, kernel_size_.width, filters_, channels},
                        options_.kernel_initializer, true, options_.seed ? *options_.seed : next_random_seed(),
                        options_.kernel_regularizer, options_.kernel_constraint);
  if (options_.use_bias)
    bias_ = &add_weight("bias", {filters_}, options_.bias_initializer, true,
                        options_.seed ? *options_.seed + 1 : next_random_seed(), options_.bias_regularizer,
                        options_.bias_constraint);
  InputSpec spec = detail::nhwc_image_spec();
  spec.axes = {{-1, channels}};
  set_input_spec(std::move(spec));
}

std::vector<Tensor> Conv2DTransposeLayer::forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) {
  const Tensor& x = in[0];
  const bool same = options_.padding == Padding::same;
  const Conv2DGeometry g = geometry_for(x.dim(1), x.dim(2));
  Tensor z({x.dim(0), detail::transpose_output(x.dim(1), g.kernel_h, g.stride_h, same),
            detail::transpose_output(x.dim(2), g.kernel_w, g.stride_w, same), filters_});
  int r = ctx.replica_id;
  ctx.backend->conv2d_backward_data(x, kernel_->value(r), g, z);
  if (bias_) ctx.backend->bias_add(z, bias_->value(r));
  if (activation_ == ActivationKind::linear) return {z};
  if (!activation_.gradient_from_output()) return {detail::finish_activation(ctx, activation_, z, st)};
  Tensor y(z.shape());
  ctx.backend->activation_forward(activation_, z, y);
  return {y};
}

std::vector<Tensor> Conv2DTransposeLayer::backward(ReplicaContext& ctx, const std::vector<Tensor>& in,
                                                   const std::vector<Tensor>& out, const std::vector<Tensor>& grads,
                                                   LayerState& st) {
  int r = ctx.replica_id;
  Tensor dz = detail::through_activation(ctx, activation_, out[0], grads[0], st);
  auto [first, db] = detail::take_kernel_bias_grads(where(), *kernel_, bias_, r);
  if (db.defined()) ctx.backend->sum_to_last_axis(dz, db, !first);
  const Conv2DGeometry g = geometry_for(in[0].dim(1), in[0].dim(2));
  // The roles of the Conv2D swap: dz is its input and our input x its output gradient.
  Tensor no_bias;
  ctx.backend->conv2d_backward_weights(dz, in[0], g, kernel_->grad(r), no_bias, !first);
  if (!st.need_input_grads) return {Tensor()};
  Tensor dx(in[0].shape());
  ctx.backend->conv2d_forward(dz, kernel_->value(r), Tensor(), g, ActivationKind::linear, dx);
  return {dx};
}

Json Conv2DTransposeLayer::get_config() const {
  detail::Json config = {{"name", name()},
                         {"filters", filters_},
                         {"kernel_size", detail::json_size2d(kernel_size_)},
                         {"strides", detail::json_size2d(options_.strides)},
                         {"padding", padding_name(options_.padding)},
                         {"output_padding", nullptr},
                         {"dilation_rate", detail::Json::array({1, 1})},
                         {"activation", activation_config_name(activation_, name())},
                         {"use_bias", options_.use_bias}};
  detail::add_weight_options(config, "kernel", options_.kernel_regularizer, options_.kernel_constraint);
  detail::add_weight_options(config, "bias", options_.bias_regularizer, options_.bias_constraint);
  return config;
}

LayerRef Conv2DTranspose(std::int64_t filters, Size2D kernel_size, Conv2DTransposeOptions options) {
  return std::make_shared<Conv2DTransposeLayer>(filters, kernel_size, std::move(options));
}

KERASCPP_REGISTER_LAYER("Conv2DTranspose", [](const LayerConfig& c) {
  c.expect_channels_last();
  c.expect_no_dilation();
  c.expect("output_padding", nullptr, "no output_padding yet");
  return layers::Conv2DTranspose(
      c.required<std::int64_t>("filters"), c.size2d("kernel_size", 0),
      detail::read_kernel_options(
          c, layers::Conv2DTransposeOptions{.strides = c.size2d("strides", 1), .padding = c.padding()}));
});

}  // namespace kerascpp::layers
