#include "kerascpp/layers/conv2d.hpp"

#include "kerascpp/random.hpp"
#include "check.hpp"
#include "layer_util.hpp"

namespace kerascpp::layers {

Conv2DLayer::Conv2DLayer(std::int64_t filters, std::int64_t kernel_size, Conv2DOptions options)
    : Layer(options.name), filters_(filters), options_(std::move(options)) {
  // kernel_size_hw {0, 0} means "use the square kernel_size"; anything else must be two positive
  // sizes (a negative entry used to fall back to kernel_size without a word).
  const auto& hw = options_.kernel_size_hw;
  const bool rectangular = hw[0] != 0 || hw[1] != 0;
  KERASCPP_CHECK(filters_ > 0, ValueError, "Conv2D '{}': filters must be positive, got {}", name(), filters_);
  KERASCPP_CHECK(!rectangular || (hw[0] > 0 && hw[1] > 0), ValueError,
                 "Conv2D '{}': kernel_size_hw must hold two positive sizes (or {{0, 0}} to use kernel_size), got "
                 "{{{}, {}}}",
                 name(), hw[0], hw[1]);
  KERASCPP_CHECK(rectangular || kernel_size > 0, ValueError, "Conv2D '{}': kernel_size must be positive, got {}",
                 name(), kernel_size);
  KERASCPP_CHECK(options_.strides[0] > 0 && options_.strides[1] > 0, ValueError,
                 "Conv2D '{}': strides must be positive, got {{{}, {}}}", name(), options_.strides[0],
                 options_.strides[1]);
  kh_ = rectangular ? hw[0] : kernel_size;
  kw_ = rectangular ? hw[1] : kernel_size;
  activation_ = activation_from_name(options_.activation, "Conv2D");
  detail::parse_padding(options_.padding, "Conv2D");
}

std::vector<Shape> Conv2DLayer::compute_output_shapes(const std::vector<Shape>& in) {
  detail::expect_inputs(in, 1, where());
  const Shape& s = in[0];
  if (s.size() != 3)
    throw ShapeError(fmt::format("{}: expects inputs of rank 4 (batch, height, width, channels) but got shape {}; add a "
                            "channel axis with Reshape, e.g. Reshape({{28, 28, 1}})",
                            where(), shape_str(detail::with_batch(-1, s))));
  if (kernel_ && kernel_->shape()[2] != s[2])
    throw ShapeError(fmt::format("{}: built for {} input channels but called on shape {}", where(), kernel_->shape()[2],
                            shape_str(detail::with_batch(-1, s))));
  bool same = detail::parse_padding(options_.padding, where());
  Conv2DGeometry g = geometry_for(s[0], s[1]);
  if (!same && (s[0] < kh_ || s[1] < kw_)) {
    throw ShapeError(fmt::format("{}: kernel {}x{} is larger than the input {} with padding=\"valid\"; use padding=\"same\" "
                            "or a smaller kernel",
                            where(), kh_, kw_, shape_str(detail::with_batch(-1, s))));
  }
  return {{detail::window_output(s[0], kh_, g.stride_h, same), detail::window_output(s[1], kw_, g.stride_w, same),
           filters_}};
}

Conv2DGeometry Conv2DLayer::geometry_for(std::int64_t h, std::int64_t w) const {
  Conv2DGeometry g;
  g.kernel_h = kh_;
  g.kernel_w = kw_;
  g.stride_h = options_.strides[0];
  g.stride_w = options_.strides[1];
  if (options_.padding == "same") {
    detail::same_padding(h, kh_, g.stride_h, g.pad_top, g.pad_bottom);
    detail::same_padding(w, kw_, g.stride_w, g.pad_left, g.pad_right);
  }
  return g;
}

void Conv2DLayer::build(const std::vector<Shape>& in) {
  kernel_ = &add_weight("kernel", {kh_, kw_, in[0][2], filters_}, options_.kernel_initializer, true,
                        options_.seed ? *options_.seed : next_random_seed());
  if (options_.use_bias)
    bias_ = &add_weight("bias", {filters_}, options_.bias_initializer, true,
                        options_.seed ? *options_.seed + 1 : next_random_seed());
}

std::vector<Tensor> Conv2DLayer::forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState&) {
  const Tensor& x = in[0];
  bool same = options_.padding == "same";
  Conv2DGeometry g = geometry_for(x.dim(1), x.dim(2));
  Tensor y({x.dim(0), detail::window_output(x.dim(1), kh_, g.stride_h, same),
            detail::window_output(x.dim(2), kw_, g.stride_w, same), filters_});
  int r = ctx.replica_id;
  ctx.backend->conv2d_forward(x, kernel_->value(r), bias_ ? bias_->value(r) : Tensor(), g, activation_, y);
  return {y};
}

std::vector<Tensor> Conv2DLayer::backward(ReplicaContext& ctx, const std::vector<Tensor>& in,
                                          const std::vector<Tensor>& out, const std::vector<Tensor>& grads,
                                          LayerState& st) {
  int r = ctx.replica_id;
  Tensor dz = detail::through_activation(ctx, activation_, out[0], grads[0]);
  bool first = kernel_->take_first_grad(r);
  Tensor db;
  if (bias_) {
    bool first_b = bias_->take_first_grad(r);
    if (first_b != first)
      throw StateError(fmt::format("{}: kernel and bias gradients out of step", where()));
    db = bias_->grad(r);
  }
  Conv2DGeometry g = geometry_for(in[0].dim(1), in[0].dim(2));
  ctx.backend->conv2d_backward_weights(in[0], dz, g, kernel_->grad(r), db, !first);
  if (!st.need_input_grads) return {Tensor()};  // e.g. the first layer: nothing upstream to train
  Tensor dx(in[0].shape());
  ctx.backend->conv2d_backward_data(dz, kernel_->value(r), g, dx);
  return {dx};
}

std::string Conv2DLayer::config_json() const {
  return fmt::format(
      R"({{"name": "{}", "filters": {}, "kernel_size": [{}, {}], "strides": [{}, {}], "padding": "{}", "activation": "{}", "use_bias": {}}})",
      name(), filters_, kh_, kw_, options_.strides[0], options_.strides[1], options_.padding,
      activation_name(activation_), options_.use_bias ? "true" : "false");
}

LayerRef Conv2D(std::int64_t filters, std::int64_t kernel_size, Conv2DOptions options) {
  return std::make_shared<Conv2DLayer>(filters, kernel_size, std::move(options));
}

}  // namespace kerascpp::layers
