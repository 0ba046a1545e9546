// Conv1D over (batch, steps, channels) inputs with a (kernel_size, channels, filters) kernel
// (Keras layout); "valid", "same" or "causal" padding. Runs on the Conv2D backend ops.
//   Conv1D(16, 3)  Conv1D(16, 5, {.strides = 2, .padding = Padding::causal})
#pragma once
#include <optional>

#include "kerascpp/layer.hpp"
#include "kerascpp/layers/window_args.hpp"

namespace kerascpp::layers {

struct Conv1DOptions {
  std::int64_t strides = 1;
  Padding padding = Padding::valid;  // valid, same or causal
  std::string activation = "linear";
  bool use_bias = true;
  initializers::Initializer kernel_initializer = "glorot_uniform";
  initializers::Initializer bias_initializer = "zeros";
  regularizers::Regularizer kernel_regularizer{};  // e.g. regularizers::L2(1e-4)
  regularizers::Regularizer bias_regularizer{};
  constraints::Constraint kernel_constraint{};  // e.g. constraints::MaxNorm(3)
  constraints::Constraint bias_constraint{};
  std::optional<std::uint64_t> seed{};
  std::string name{};
};

class Conv1DLayer : public Layer {
 public:
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

LayerRef Conv1D(std::int64_t filters, std::int64_t kernel_size, Conv1DOptions options = {});
/// Keras' alias of Conv1D (a .keras file names Conv1D).
inline LayerRef Convolution1D(std::int64_t filters, std::int64_t kernel_size, Conv1DOptions options = {}) {
  return Conv1D(filters, kernel_size, std::move(options));
}

}  // namespace kerascpp::layers
