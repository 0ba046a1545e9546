// Conv2D over NHWC inputs with an HWIO kernel (Keras layout); "valid" or "same" padding.
//   Conv2D(32, 3)  Conv2D(32, {3, 5}, {.strides = {2, 2}, .padding = Padding::same})
#pragma once
#include <optional>

#include "kerascpp/core/layer.hpp"
#include "kerascpp/layers/window_args.hpp"

namespace kerascpp::layers {

/// Conv2D's settings, with Keras' names and defaults.
struct Conv2DOptions {
  Size2D strides = 1;  ///< 2 or {2, 1}
  /// Padding::valid (none) or Padding::same (ceil(input / stride) outputs).
  Padding padding = Padding::valid;
  /// Applied to the output; "linear" applies none.
  std::string activation = "linear";
  /// Whether the layer adds a bias.
  bool use_bias = true;
  initializers::Initializer kernel_initializer = "glorot_uniform";  ///< a name or initializers::Constant(v)
  /// How the bias starts.
  initializers::Initializer bias_initializer = "zeros";
  regularizers::Regularizer kernel_regularizer{};  ///< e.g. regularizers::L2(1e-4) or "l2"
  /// Penalty on the bias added to the loss (none by default).
  regularizers::Regularizer bias_regularizer{};
  constraints::Constraint kernel_constraint{};  ///< e.g. constraints::MaxNorm(3)
  /// Projection of the bias after each optimizer update (none by default).
  constraints::Constraint bias_constraint{};
  /// Initializer seed; unset draws one from set_random_seed's stream.
  std::optional<std::uint64_t> seed{};
  /// The layer's name; "" gives it an automatic one from its class ("conv2d", "conv2d_1", ...).
  std::string name{};
  /// Keras' dtype: this layer's dtype policy ("float32", "mixed_bfloat16", "mixed_float16");
  /// "" takes the global policy (mixed_precision::set_global_policy).
  std::string dtype{};
};

/// Keras' Conv2D (make it with Conv2D()).
class Conv2DLayer : public Layer {
 public:
  /// `filters` output channels from windows of `kernel_size`.
  Conv2DLayer(std::int64_t filters, Size2D kernel_size, Conv2DOptions options);
  std::string class_name() const override { return "Conv2D"; }
  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& in) override;
  void build(const std::vector<Shape>& in) override;
  std::vector<Tensor> forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) override;
  std::vector<Tensor> backward(ReplicaContext& ctx, const std::vector<Tensor>& in, const std::vector<Tensor>& out,
                               const std::vector<Tensor>& grads, LayerState& st) override;
  Json get_config() const override;
  LowPrecisionIO low_precision_io() const override;  // any, with a linear or relu activation
  bool ends_in_relu() const override;

 private:
  Conv2DGeometry geometry_for(std::int64_t height, std::int64_t width) const;
  InputSpec image_spec() const;
  std::int64_t filters_;
  Size2D kernel_size_;
  Conv2DOptions options_;
  ActivationFn activation_;
  Variable* kernel_ = nullptr;
  Variable* bias_ = nullptr;
};

/// kernel_size: 3 (3x3) or {height, width}.
LayerRef Conv2D(std::int64_t filters, Size2D kernel_size, Conv2DOptions options = {});
/// Keras' alias of Conv2D (a .keras file names Conv2D).
inline LayerRef Convolution2D(std::int64_t filters, Size2D kernel_size, Conv2DOptions options = {}) {
  return Conv2D(filters, kernel_size, std::move(options));
}

}  // namespace kerascpp::layers
