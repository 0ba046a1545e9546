#include "kerascpp/layers/conv1d.hpp"
#include "kerascpp/core/layer_config.hpp"

#include "check.hpp"
#include "kerascpp/core/random.hpp"
#include "layer_util.hpp"

namespace kerascpp::layers {

Conv1DLayer::Conv1DLayer(std::int64_t filters, std::int64_t kernel_size, Conv1DOptions options)
    : Layer(options.name), filters_(filters), kernel_size_(kernel_size), options_(std::move(options)) {
  KERASCPP_CHECK_VALUE(filters_ > 0, "Conv1D '{}': filters must be positive, got {}", name(), filters_);
  KERASCPP_CHECK_VALUE(kernel_size_ > 0, "Conv1D '{}': kernel_size must be positive, got {}", name(), kernel_size_);
  KERASCPP_CHECK_VALUE(options_.strides > 0, "Conv1D '{}': strides must be positive, got {}", name(), options_.strides);
  activation_ = detail::kernel_layer_activation(options_.activation, "Conv1D");
  set_input_spec(sequence_spec());
}

InputSpec Conv1DLayer::sequence_spec() const { return detail::sequence_conv_spec(); }

std::int64_t Conv1DLayer::output_steps(std::int64_t steps) const {
  // Causal padding adds kernel_size - 1 steps in front: as many outputs as "same".
  const bool same = options_.padding != Padding::valid;
  return detail::window_output(steps, kernel_size_, options_.strides, same);
}

std::vector<Shape> Conv1DLayer::compute_output_shapes(const std::vector<Shape>& in) {
  const Shape& s = in[0];  // (steps, channels): the input spec holds
  KERASCPP_CHECK_SHAPE(options_.padding != Padding::valid || s[0] >= kernel_size_,
                       "{}: kernel_size {} is larger than the input {} ({} steps) with padding=\"valid\"; use "
                       "Padding::same, Padding::causal or a smaller kernel",
                       where(), kernel_size_, shape_str(detail::with_batch(-1, s)), s[0]);
  return {{output_steps(s[0]), filters_}};
}

Conv2DGeometry Conv1DLayer::geometry_for(std::int64_t steps) const {
  Conv2DGeometry g;
  g.kernel_h = 1;
  g.kernel_w = kernel_size_;
  g.stride_w = options_.strides;
  if (options_.padding == Padding::same) detail::same_padding(steps, kernel_size_, g.stride_w, g.pad_left, g.pad_right);
  if (options_.padding == Padding::causal) g.pad_left = kernel_size_ - 1;  // Keras pads the front only
  return g;
}

void Conv1DLayer::build(const std::vector<Shape>& in) {
  const std::int64_t channels = in[0][1];
  kernel_ = &add_weight("kernel", {kernel_size_, channels, filters_}, options_.kernel_initializer, true,
                        options_.seed ? *options_.seed : next_random_seed(), options_.kernel_regularizer,
                        options_.kernel_constraint);
  if (options_.use_bias)
    bias_ = &add_weight("bias", {filters_}, options_.bias_initializer, true,
                        options_.seed ? *options_.seed + 1 : next_random_seed(), options_.bias_regularizer,
                        options_.bias_constraint);
  InputSpec spec = sequence_spec();
  spec.axes = {{-1, channels}};
  set_input_spec(std::move(spec));
}

std::vector<Tensor> Conv1DLayer::forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) {
  const Tensor& x = in[0];
  Tensor y({x.dim(0), output_steps(x.dim(1)), filters_});
  Tensor y2 = detail::sequence_as_image(y);
  int r = ctx.replica_id;
  ctx.backend->conv2d_forward(detail::sequence_as_image(x), detail::kernel_1d_as_2d(kernel_->value(r)),
                              bias_ ? bias_->value(r) : Tensor(), geometry_for(x.dim(1)),
                              detail::fusable_activation(activation_), y2);
  return {detail::finish_activation(ctx, activation_, y, st)};
}

std::vector<Tensor> Conv1DLayer::backward(ReplicaContext& ctx, const std::vector<Tensor>& in,
                                          const std::vector<Tensor>& out, const std::vector<Tensor>& grads,
                                          LayerState& st) {
  int r = ctx.replica_id;
  auto [first, db] = detail::take_kernel_bias_grads(where(), *kernel_, bias_, r);
  const Conv2DGeometry g = geometry_for(in[0].dim(1));
  Tensor dw = detail::kernel_1d_as_2d(kernel_->grad(r));  // a view: the op writes the kernel's gradient
  // dx and its image view share storage; both stay undefined without an input gradient.
  Tensor dx = st.need_input_grads ? Tensor(in[0].shape()) : Tensor();
  Tensor dx2 = dx.defined() ? detail::sequence_as_image(dx) : Tensor();
  const detail::ActivationGrad a = detail::op_activation_grad(ctx, activation_, out[0], grads[0], st);
  ctx.backend->conv2d_backward(a.act, detail::sequence_as_image(in[0]), detail::sequence_as_image(a.y),
                               detail::sequence_as_image(a.dy), detail::kernel_1d_as_2d(kernel_->value(r)), g, dw, db,
                               !first, dx2);
  return {dx};
}

Json Conv1DLayer::get_config() const {
  detail::Json config = {{"name", name()},
                         {"filters", filters_},
                         {"kernel_size", detail::Json::array({kernel_size_})},
                         {"strides", detail::Json::array({options_.strides})},
                         {"padding", padding_name(options_.padding)},
                         {"dilation_rate", detail::Json::array({1})},
                         {"groups", 1},
                         {"activation", activation_config_name(activation_, name())},
                         {"use_bias", options_.use_bias}};
  detail::add_weight_options(config, "kernel", options_.kernel_regularizer, options_.kernel_constraint);
  detail::add_weight_options(config, "bias", options_.bias_regularizer, options_.bias_constraint);
  return config;
}

LayerRef Conv1D(std::int64_t filters, std::int64_t kernel_size, Conv1DOptions options) {
  return std::make_shared<Conv1DLayer>(filters, kernel_size, std::move(options));
}

KERASCPP_REGISTER_LAYER("Conv1D", [](const LayerConfig& c) {
  c.expect_channels_last();
  c.expect_no_dilation();
  c.expect("groups", 1, "no grouped convolutions");
  return layers::Conv1D(c.required<std::int64_t>("filters"), c.size1d("kernel_size", 0),
                        detail::read_kernel_options(
                            c, layers::Conv1DOptions{.strides = c.size1d("strides", 1), .padding = c.padding(true)}));
});

}  // namespace kerascpp::layers
