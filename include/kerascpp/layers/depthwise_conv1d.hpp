// DepthwiseConv1D over (batch, steps, channels): each input channel is convolved with its own
// depth_multiplier filters; kernel "depthwise_kernel" (kernel_size, channels, depth_multiplier)
// and a (channels * depth_multiplier) bias, as in Keras. Runs on the DepthwiseConv2D backend ops.
//   DepthwiseConv1D(3)  DepthwiseConv1D(5, {.strides = 2, .padding = Padding::same, .depth_multiplier = 2})
#pragma once
#include <optional>

#include "kerascpp/core/layer.hpp"
#include "kerascpp/layers/window_args.hpp"

namespace kerascpp::layers {

/// DepthwiseConv1D's settings, with Keras' names and defaults.
struct DepthwiseConv1DOptions {
  /// How far the window moves between outputs, in steps.
  std::int64_t strides = 1;
  /// Padding::valid (none) or Padding::same (ceil(steps / stride) outputs).
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
  /// The layer's name; "" gives it an automatic one from its class ("depthwise_conv1d", ...).
  std::string name{};
};

/// Keras' DepthwiseConv1D (make it with DepthwiseConv1D()).
class DepthwiseConv1DLayer : public Layer {
 public:
  /// Windows of `kernel_size` steps, each channel on its own.
  DepthwiseConv1DLayer(std::int64_t kernel_size, DepthwiseConv1DOptions options);
  std::string class_name() const override { return "DepthwiseConv1D"; }
  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& in) override;
  void build(const std::vector<Shape>& in) override;
  std::vector<Tensor> forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) override;
  std::vector<Tensor> backward(ReplicaContext& ctx, const std::vector<Tensor>& in, const std::vector<Tensor>& out,
                               const std::vector<Tensor>& grads, LayerState& st) override;
  Json get_config() const override;

 private:
  // The convolution as a DepthwiseConv2D over (batch, 1, steps, channels) with a (1, k) window.
  Conv2DGeometry geometry_for(std::int64_t steps) const;
  std::int64_t output_steps(std::int64_t steps) const;
  InputSpec sequence_spec() const;
  std::int64_t kernel_size_;
  DepthwiseConv1DOptions options_;
  ActivationFn activation_;
  Variable* kernel_ = nullptr;
  Variable* bias_ = nullptr;
};

/// Keras' DepthwiseConv1D(kernel_size): a per-channel 1-D convolution over (batch, steps, channels).
LayerRef DepthwiseConv1D(std::int64_t kernel_size, DepthwiseConv1DOptions options = {});

}  // namespace kerascpp::layers
