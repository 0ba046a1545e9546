// Conv2DTranspose (a "deconvolution") over NHWC inputs: the transpose of a Conv2D, so an input
// of (h, w) grows to (h·stride, w·stride) with "same" padding or (h-1)·stride + max(kernel,
// stride) with "valid", as Keras computes it without output_padding. Kernel (kh, kw, filters,
// in_channels), as in Keras.
//   Conv2DTranspose(16, 3, {.strides = 2, .padding = Padding::same})
#pragma once
#include <optional>

#include "kerascpp/core/layer.hpp"
#include "kerascpp/layers/window_args.hpp"

namespace kerascpp::layers {

/// Conv2DTranspose's settings, with Keras' names and defaults.
struct Conv2DTransposeOptions {
  /// How far the window moves between outputs, along height and width.
  Size2D strides = 1;
  /// Padding::valid (none) or Padding::same (ceil(input / stride) outputs).
  Padding padding = Padding::valid;
  /// Applied to the output; "linear" applies none.
  std::string activation = "linear";
  /// Whether the layer adds a bias.
  bool use_bias = true;
  /// How the kernel starts: an initializer name or initializers::Constant(v).
  initializers::Initializer kernel_initializer = "glorot_uniform";
  /// How the bias starts.
  initializers::Initializer bias_initializer = "zeros";
  regularizers::Regularizer kernel_regularizer{};  ///< e.g. regularizers::L2(1e-4)
  /// Penalty on the bias added to the loss (none by default).
  regularizers::Regularizer bias_regularizer{};
  constraints::Constraint kernel_constraint{};  ///< e.g. constraints::MaxNorm(3)
  /// Projection of the bias after each optimizer update (none by default).
  constraints::Constraint bias_constraint{};
  /// Initializer seed; unset draws one from set_random_seed's stream.
  std::optional<std::uint64_t> seed{};
  /// The layer's name; "" gives it an automatic one from its class ("conv2d", "conv2d_1", ...).
  std::string name{};
};

/// Keras' Conv2DTranspose (make it with Conv2DTranspose()).
class Conv2DTransposeLayer : public Layer {
 public:
  /// `filters` output channels from windows of `kernel_size`.
  Conv2DTransposeLayer(std::int64_t filters, Size2D kernel_size, Conv2DTransposeOptions options);
  std::string class_name() const override { return "Conv2DTranspose"; }
  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& in) override;
  void build(const std::vector<Shape>& in) override;
  std::vector<Tensor> forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) override;
  std::vector<Tensor> backward(ReplicaContext& ctx, const std::vector<Tensor>& in, const std::vector<Tensor>& out,
                               const std::vector<Tensor>& grads, LayerState& st) override;
  Json get_config() const override;

 private:
  // The Conv2D whose backward-data pass this layer's forward is: it maps the output
  // (out_h, out_w, filters) back to the input (h, w, in_channels).
  Conv2DGeometry geometry_for(std::int64_t height, std::int64_t width) const;
  std::int64_t filters_;
  Size2D kernel_size_;
  Conv2DTransposeOptions options_;
  ActivationFn activation_;
  Variable* kernel_ = nullptr;
  Variable* bias_ = nullptr;
};

/// kernel_size: 3 (3x3) or {height, width}.
LayerRef Conv2DTranspose(std::int64_t filters, Size2D kernel_size, Conv2DTransposeOptions options = {});
/// Keras' alias of Conv2DTranspose (a .keras file names Conv2DTranspose).
inline LayerRef Convolution2DTranspose(std::int64_t filters, Size2D kernel_size, Conv2DTransposeOptions options = {}) {
  return Conv2DTranspose(filters, kernel_size, std::move(options));
}

}  // namespace kerascpp::layers
