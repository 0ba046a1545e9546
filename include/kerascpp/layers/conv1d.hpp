// Conv1D over (batch, steps, channels) inputs with a (kernel_size, channels, filters) kernel
// (Keras layout); "valid", "same" or "causal" padding. Runs on the Conv2D backend ops.
//   Conv1D(16, 3)  Conv1D(16, 5, {.strides = 2, .padding = Padding::causal})
#pragma once
#include <optional>

#include "kerascpp/core/layer.hpp"
#include "kerascpp/layers/window_args.hpp"

namespace kerascpp::layers {

/// Conv1D's settings, with Keras' names and defaults.
struct Conv1DOptions {
  /// How far the window moves between outputs, in steps.
  std::int64_t strides = 1;
  Padding padding = Padding::valid;  ///< valid, same or causal
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

/// Keras' Conv1D (make it with Conv1D()).
class Conv1DLayer : public Layer {
 public:
  /// `filters` outputs per step from windows of `kernel_size` steps.
  Conv1DLayer(std::int64_t filters, std::int64_t kernel_size, Conv1DOptions options);
  std::string class_name() const override { return "Conv1D"; }
  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& in) override;
  void build(const std::vector<Shape>& in) override;
  std::vector<Tensor> forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) override;
  std::vector<Tensor> backward(ReplicaContext& ctx, const std::vector<Tensor>& in, const std::vector<Tensor>& out,
                               const std::vector<Tensor>& grads, LayerState& st) override;
  Json get_config() const override;

 private:
  // The convolution as a Conv2D over (batch, 1, steps, channels) with a (1, k) kernel.
  Conv2DGeometry geometry_for(std::int64_t steps) const;
  std::int64_t output_steps(std::int64_t steps) const;
  InputSpec sequence_spec() const;
  std::int64_t filters_;
  std::int64_t kernel_size_;
  Conv1DOptions options_;
  ActivationFn activation_;
  Variable* kernel_ = nullptr;
  Variable* bias_ = nullptr;
};

/// Keras' Conv1D(filters, kernel_size): a 1-D convolution over (batch, steps, channels).
LayerRef Conv1D(std::int64_t filters, std::int64_t kernel_size, Conv1DOptions options = {});
/// Keras' alias of Conv1D (a .keras file names Conv1D).
inline LayerRef Convolution1D(std::int64_t filters, std::int64_t kernel_size, Conv1DOptions options = {}) {
  return Conv1D(filters, kernel_size, std::move(options));
}

}  // namespace kerascpp::layers
