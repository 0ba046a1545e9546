// SeparableConv1D and SeparableConv2D: a depthwise convolution (each input channel with its own
// depth_multiplier filters) followed by a 1x1 convolution that mixes the channels, then the bias
// and the activation. Weights as Keras has them: "depthwise_kernel" (kernel..., channels,
// depth_multiplier), "pointwise_kernel" (1..., channels * depth_multiplier, filters), "bias"
// (filters).
//   SeparableConv2D(32, 3)  SeparableConv2D(64, 3, {.strides = 2, .padding = Padding::same, .depth_multiplier = 2})
//   SeparableConv1D(16, 5, {.padding = Padding::same})
#pragma once
#include <optional>

#include "kerascpp/core/layer.hpp"
#include "kerascpp/layers/window_args.hpp"

namespace kerascpp::layers {

/// SeparableConv2D's settings, with Keras' names and defaults.
struct SeparableConv2DOptions {
  /// How far the depthwise window moves between outputs, along height and width.
  Size2D strides = 1;
  /// Padding::valid (none) or Padding::same (ceil(input / stride) outputs).
  Padding padding = Padding::valid;
  /// Depthwise output channels per input channel.
  std::int64_t depth_multiplier = 1;
  /// Applied to the output; "linear" applies none.
  std::string activation = "linear";
  /// Whether the layer adds a bias (after the pointwise convolution).
  bool use_bias = true;
  /// How the depthwise kernel starts: an initializer name or initializers::Constant(v).
  initializers::Initializer depthwise_initializer = "glorot_uniform";
  /// How the pointwise (1x1) kernel starts.
  initializers::Initializer pointwise_initializer = "glorot_uniform";
  /// How the bias starts.
  initializers::Initializer bias_initializer = "zeros";
  regularizers::Regularizer depthwise_regularizer{};  ///< e.g. regularizers::L2(1e-4)
  /// Penalty on the pointwise kernel added to the loss (none by default).
  regularizers::Regularizer pointwise_regularizer{};
  /// Penalty on the bias added to the loss (none by default).
  regularizers::Regularizer bias_regularizer{};
  constraints::Constraint depthwise_constraint{};  ///< e.g. constraints::MaxNorm(3)
  /// Projection of the pointwise kernel after each optimizer update (none by default).
  constraints::Constraint pointwise_constraint{};
  /// Projection of the bias after each optimizer update (none by default).
  constraints::Constraint bias_constraint{};
  /// Initializer seed; unset draws one from set_random_seed's stream.
  std::optional<std::uint64_t> seed{};
  /// The layer's name; "" gives it an automatic one from its class ("separable_conv2d", ...).
  std::string name{};
};

/// SeparableConv1D's settings: SeparableConv2D's, with one stride along the steps.
struct SeparableConv1DOptions {
  /// How far the depthwise window moves between outputs, in steps.
  std::int64_t strides = 1;
  /// Padding::valid (none) or Padding::same (ceil(steps / stride) outputs).
  Padding padding = Padding::valid;
  /// Depthwise output channels per input channel.
  std::int64_t depth_multiplier = 1;
  /// Applied to the output; "linear" applies none.
  std::string activation = "linear";
  /// Whether the layer adds a bias (after the pointwise convolution).
  bool use_bias = true;
  /// How the depthwise kernel starts: an initializer name or initializers::Constant(v).
  initializers::Initializer depthwise_initializer = "glorot_uniform";
  /// How the pointwise kernel starts.
  initializers::Initializer pointwise_initializer = "glorot_uniform";
  /// How the bias starts.
  initializers::Initializer bias_initializer = "zeros";
  regularizers::Regularizer depthwise_regularizer{};  ///< e.g. regularizers::L2(1e-4)
  /// Penalty on the pointwise kernel added to the loss (none by default).
  regularizers::Regularizer pointwise_regularizer{};
  /// Penalty on the bias added to the loss (none by default).
  regularizers::Regularizer bias_regularizer{};
  constraints::Constraint depthwise_constraint{};  ///< e.g. constraints::MaxNorm(3)
  /// Projection of the pointwise kernel after each optimizer update (none by default).
  constraints::Constraint pointwise_constraint{};
  /// Projection of the bias after each optimizer update (none by default).
  constraints::Constraint bias_constraint{};
  /// Initializer seed; unset draws one from set_random_seed's stream.
  std::optional<std::uint64_t> seed{};
  /// The layer's name; "" gives it an automatic one from its class ("separable_conv1d", ...).
  std::string name{};
};

/// Keras' SeparableConv1D and SeparableConv2D (make them with SeparableConv1D() / SeparableConv2D()).
/// A 1-D layer runs as the 2-D one over (batch, 1, steps, channels) views.
class SeparableConvLayer : public Layer {
 public:
  /// rank 2: windows of `kernel_size`; rank 1: the options' strides and kernel_size in `width`
  /// (height 1), as SeparableConv1D() passes them.
  SeparableConvLayer(int rank, std::int64_t filters, Size2D kernel_size, SeparableConv2DOptions options);
  std::string class_name() const override { return rank_ == 1 ? "SeparableConv1D" : "SeparableConv2D"; }
  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& in) override;
  void build(const std::vector<Shape>& in) override;
  std::vector<Tensor> forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) override;
  std::vector<Tensor> backward(ReplicaContext& ctx, const std::vector<Tensor>& in, const std::vector<Tensor>& out,
                               const std::vector<Tensor>& grads, LayerState& st) override;
  Json get_config() const override;

 private:
  Conv2DGeometry geometry_for(std::int64_t height, std::int64_t width) const;
  // The input or output as an NHWC image: itself (rank 2) or (batch, 1, steps, channels).
  Tensor as_image(const Tensor& t) const;
  InputSpec spec() const;
  int rank_;
  std::int64_t filters_;
  Size2D kernel_size_;
  SeparableConv2DOptions options_;
  ActivationFn activation_;
  Variable* depthwise_ = nullptr;
  Variable* pointwise_ = nullptr;
  Variable* bias_ = nullptr;
};

/// Keras' SeparableConv2D(filters, kernel_size) over (batch, height, width, channels);
/// kernel_size: 3 (3x3) or {height, width}.
LayerRef SeparableConv2D(std::int64_t filters, Size2D kernel_size, SeparableConv2DOptions options = {});
/// Keras' SeparableConv1D(filters, kernel_size) over (batch, steps, channels).
LayerRef SeparableConv1D(std::int64_t filters, std::int64_t kernel_size, SeparableConv1DOptions options = {});
/// Keras' alias of SeparableConv2D (a .keras file names SeparableConv2D).
inline LayerRef SeparableConvolution2D(std::int64_t filters, Size2D kernel_size, SeparableConv2DOptions options = {}) {
  return SeparableConv2D(filters, kernel_size, std::move(options));
}
/// Keras' alias of SeparableConv1D.
inline LayerRef SeparableConvolution1D(std::int64_t filters, std::int64_t kernel_size,
                                       SeparableConv1DOptions options = {}) {
  return SeparableConv1D(filters, kernel_size, std::move(options));
}

}  // namespace kerascpp::layers
