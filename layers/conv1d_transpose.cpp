#include "kerascpp/layers/conv1d_transpose.hpp"
#include "kerascpp/core/layer_config.hpp"

#include "check.hpp"
#include "kerascpp/core/random.hpp"
#include "layer_util.hpp"

namespace kerascpp::layers {

Conv1DTransposeLayer::Conv1DTransposeLayer(std::int64_t filters, std::int64_t kernel_size,
                                           Conv1DTransposeOptions options)
    : Layer(options.name), filters_(filters), kernel_size_(kernel_size), options_(std::move(options)) {
  KERASCPP_CHECK_VALUE(filters_ > 0, "Conv1DTranspose '{}': filters must be positive, got {}", name(), filters_);
  KERASCPP_CHECK_VALUE(kernel_size_ > 0, "Conv1DTranspose '{}': kernel_size must be positive, got {}", name(),
                       kernel_size_);
  KERASCPP_CHECK_VALUE(options_.strides > 0, "Conv1DTranspose '{}': strides must be positive, got {}", name(),
                       options_.strides);
  KERASCPP_CHECK_VALUE(options_.padding == Padding::valid || options_.padding == Padding::same,
                       "Conv1DTranspose '{}': padding must be Padding::valid or Padding::same, got \"{}\"", name(),
                       padding_name(options_.padding));
  activation_ = detail::kernel_layer_activation(options_.activation, "Conv1DTranspose");
  set_input_spec(detail::sequence_conv_spec());
}

std::int64_t Conv1DTransposeLayer::output_steps(std::int64_t steps) const {
  return detail::transpose_output(steps, kernel_size_, options_.strides, options_.padding == Padding::same);
}

std::vector<Shape> Conv1DTransposeLayer::compute_output_shapes(const std::vector<Shape>& in) {
  return {{output_steps(in[0][0]), filters_}};
}

Conv2DGeometry Conv1DTransposeLayer::geometry_for(std::int64_t steps) const {
  Conv2DGeometry g;
  g.kernel_w = kernel_size_;
  g.stride_w = options_.strides;
  detail::transpose_padding(steps, output_steps(steps), kernel_size_, options_.strides,
                            options_.padding == Padding::same, g.pad_left, g.pad_right);
  return g;
}

void Conv1DTransposeLayer::build(const std::vector<Shape>& in) {
  const std::int64_t channels = in[0][1];
  // (k, filters, in_channels): the kernel of the Conv1D from our output to our input.
  kernel_ = &add_weight("kernel", {kernel_size_, filters_, channels}, options_.kernel_initializer, true,
                        options_.seed ? *options_.seed : next_random_seed(), options_.kernel_regularizer,
                        options_.kernel_constraint);
  if (options_.use_bias)
    bias_ = &add_weight("bias", {filters_}, options_.bias_initializer, true,
                        options_.seed ? *options_.seed + 1 : next_random_seed(), options_.bias_regularizer,
                        options_.bias_constraint);
  InputSpec spec = detail::sequence_conv_spec();
  spec.axes = {{-1, channels}};
  set_input_spec(std::move(spec));
}

std::vector<Tensor> Conv1DTransposeLayer::forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) {
  const Tensor& x = in[0];
  Tensor z({x.dim(0), output_steps(x.dim(1)), filters_});
  Tensor z_image = detail::sequence_as_image(z);
  const int r = ctx.replica_id;
  ctx.backend->conv2d_backward_data(detail::sequence_as_image(x), detail::kernel_1d_as_2d(kernel_->value(r)),
                                    geometry_for(x.dim(1)), z_image);
  if (bias_) ctx.backend->bias_add(z, bias_->value(r));
  if (activation_ == ActivationKind::linear) return {z};
  if (!activation_.gradient_from_output()) return {detail::finish_activation(ctx, activation_, z, st)};
  Tensor y(z.shape());
  ctx.backend->activation_forward(activation_, z, y);
  return {y};
}

std::vector<Tensor> Conv1DTransposeLayer::backward(ReplicaContext& ctx, const std::vector<Tensor>& in,
                                                   const std::vector<Tensor>& out, const std::vector<Tensor>& grads,
                                                   LayerState& st) {
  const int r = ctx.replica_id;
  Tensor dz = detail::through_activation(ctx, activation_, out[0], grads[0], st);
  auto [first, db] = detail::take_kernel_bias_grads(where(), *kernel_, bias_, r);
  if (db.defined()) ctx.backend->sum_to_last_axis(dz, db, !first);
  const Conv2DGeometry g = geometry_for(in[0].dim(1));
  // The roles of the Conv1D swap: dz is its input and our input x its output gradient.
  Tensor dw = detail::kernel_1d_as_2d(kernel_->grad(r));  // a view: the op writes the kernel's gradient
  Tensor no_bias;
  ctx.backend->conv2d_backward_weights(detail::sequence_as_image(dz), detail::sequence_as_image(in[0]), g, dw, no_bias,
                                       !first);
  if (!st.need_input_grads) return {Tensor()};
  Tensor dx(in[0].shape());
  Tensor dx_image = detail::sequence_as_image(dx);
  ctx.backend->conv2d_forward(detail::sequence_as_image(dz), detail::kernel_1d_as_2d(kernel_->value(r)), Tensor(), g,
                              ActivationKind::linear, dx_image);
  return {dx};
}

Json Conv1DTransposeLayer::get_config() const {
  detail::Json config = {{"name", name()},
                         {"filters", filters_},
                         {"kernel_size", detail::Json::array({kernel_size_})},
                         {"strides", detail::Json::array({options_.strides})},
                         {"padding", padding_name(options_.padding)},
                         {"output_padding", nullptr},
                         {"data_format", "channels_last"},
                         {"dilation_rate", detail::Json::array({1})},
                         {"activation", activation_config_name(activation_, name())},
                         {"use_bias", options_.use_bias}};
  detail::add_weight_options(config, "kernel", options_.kernel_regularizer, options_.kernel_constraint);
  detail::add_weight_options(config, "bias", options_.bias_regularizer, options_.bias_constraint);
  return config;
}

LayerRef Conv1DTranspose(std::int64_t filters, std::int64_t kernel_size, Conv1DTransposeOptions options) {
  return std::make_shared<Conv1DTransposeLayer>(filters, kernel_size, std::move(options));
}

KERASCPP_REGISTER_LAYER("Conv1DTranspose", [](const LayerConfig& c) {
  c.expect_channels_last();
  c.expect_no_dilation();
  c.expect("output_padding", nullptr, "no output_padding yet");
  return layers::Conv1DTranspose(
      c.required<std::int64_t>("filters"), c.size1d("kernel_size", 0),
      detail::read_kernel_options(
          c, layers::Conv1DTransposeOptions{.strides = c.size1d("strides", 1), .padding = c.padding()}));
});

}  // namespace kerascpp::layers
