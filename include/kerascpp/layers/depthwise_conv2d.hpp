// DepthwiseConv2D over NHWC inputs: each input channel is convolved with its own
// depth_multiplier filters; kernel "depthwise_kernel" (kh, kw, channels, depth_multiplier) and
// a (channels * depth_multiplier) bias, as in Keras.
//   DepthwiseConv2D(3)  DepthwiseConv2D({3, 5}, {.strides = 2, .padding = Padding::same, .depth_multiplier = 2})
#pragma once
#include <optional>

#include "kerascpp/core/layer.hpp"
#include "kerascpp/layers/window_args.hpp"

namespace kerascpp::layers {

/// DepthwiseConv2D's settings, with Keras' names and defaults.
struct DepthwiseConv2DOptions {
  /// How far the window moves between outputs, along height and width.
  Size2D strides = 1;
  /// Padding::valid (none) or Padding::same (ceil(input / stride) outputs).
  Padding padding = Padding::valid;
  /// Output channels per input channel.
  std::int64_t depth_multiplier = 1;
  /// Applied to the output; "linear" applies none.
  std::string activation = "linear";
  /// Whether the layer adds a bias.
  bool use_bias = true;
  /// How the depthwise kernel starts: an initializer name or initializers::Constant(v).
  initializers::Initializer depthwise_initializer = "glorot_uniform";
  /// How the bias starts.
  initializers::Initializer bias_initializer = "zeros";
  regularizers::Regularizer depthwise_regularizer{};  ///< e.g. regularizers::L2(1e-4)
  /// Penalty on the bias added to the loss (none by default).
  regularizers::Regularizer bias_regularizer{};
  constraints::Constraint depthwise_constraint{};  ///< e.g. constraints::MaxNorm(3)
  /// Projection of the bias after each optimizer update (none by default).
  constraints::Constraint bias_constraint{};
  /// Initializer seed; unset draws one from set_random_seed's stream.
  std::optional<std::uint64_t> seed{};
  /// The layer's name; "" gives it an automatic one from its class ("conv2d", "conv2d_1", ...).
  std::string name{};
};

/// Keras' DepthwiseConv2D (make it with DepthwiseConv2D()).
class DepthwiseConv2DLayer : public Layer {
 public:
  /// Windows of `kernel_size`, each channel on its own.
  DepthwiseConv2DLayer(Size2D kernel_size, DepthwiseConv2DOptions options);
  std::string class_name() const override { return "DepthwiseConv2D"; }
  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& in) override;
  void build(const std::vector<Shape>& in) override;
  std::vector<Tensor> forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) override;
  std::vector<Tensor> backward(ReplicaContext& ctx, const std::vector<Tensor>& in, const std::vector<Tensor>& out,
                               const std::vector<Tensor>& grads, LayerState& st) override;
  Json get_config() const override;

 private:
  Conv2DGeometry geometry_for(std::int64_t height, std::int64_t width) const;
  Size2D kernel_size_;
  DepthwiseConv2DOptions options_;
  ActivationFn activation_;
  Variable* kernel_ = nullptr;
  Variable* bias_ = nullptr;
};

/// kernel_size: 3 (3x3) or {height, width}.
LayerRef DepthwiseConv2D(Size2D kernel_size, DepthwiseConv2DOptions options = {});

}  // namespace kerascpp::layers
