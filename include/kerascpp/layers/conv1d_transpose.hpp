// Conv1DTranspose over (batch, steps, channels): the transpose of a Conv1D, so `steps` grows to
// steps·stride with "same" padding or (steps-1)·stride + max(kernel, stride) with "valid", as
// Keras computes it without output_padding. Kernel (kernel_size, filters, in_channels), as in
// Keras. Runs on the Conv2D backend ops over (batch, 1, steps, channels) views.
//   Conv1DTranspose(8, 3, {.strides = 2, .padding = Padding::same})
#pragma once
#include <optional>

#include "kerascpp/core/layer.hpp"
#include "kerascpp/layers/window_args.hpp"

namespace kerascpp::layers {

/// Conv1DTranspose's settings, with Keras' names and defaults.
struct Conv1DTransposeOptions {
  /// How far the window moves between inputs, in output steps.
  std::int64_t strides = 1;
  /// Padding::valid or Padding::same (steps·stride outputs).
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
  /// The layer's name; "" gives it an automatic one from its class ("conv1d_transpose", ...).
  std::string name{};
};

/// Keras' Conv1DTranspose (make it with Conv1DTranspose()).
class Conv1DTransposeLayer : public Layer {
 public:
  /// `filters` output channels from windows of `kernel_size` steps.
  Conv1DTransposeLayer(std::int64_t filters, std::int64_t kernel_size, Conv1DTransposeOptions options);
  std::string class_name() const override { return "Conv1DTranspose"; }
  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& in) override;
  void build(const std::vector<Shape>& in) override;
  std::vector<Tensor> forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) override;
  std::vector<Tensor> backward(ReplicaContext& ctx, const std::vector<Tensor>& in, const std::vector<Tensor>& out,
                               const std::vector<Tensor>& grads, LayerState& st) override;
  Json get_config() const override;

 private:
  // The Conv2D from our output back to our input, over (batch, 1, steps, channels) views.
  Conv2DGeometry geometry_for(std::int64_t steps) const;
  std::int64_t output_steps(std::int64_t steps) const;
  std::int64_t filters_;
  std::int64_t kernel_size_;
  Conv1DTransposeOptions options_;
  ActivationFn activation_;
  Variable* kernel_ = nullptr;
  Variable* bias_ = nullptr;
};

/// Keras' Conv1DTranspose(filters, kernel_size).
LayerRef Conv1DTranspose(std::int64_t filters, std::int64_t kernel_size, Conv1DTransposeOptions options = {});
/// Keras' alias of Conv1DTranspose (a .keras file names Conv1DTranspose).
inline LayerRef Convolution1DTranspose(std::int64_t filters, std::int64_t kernel_size,
                                       Conv1DTransposeOptions options = {}) {
  return Conv1DTranspose(filters, kernel_size, std::move(options));
}

}  // namespace kerascpp::layers
