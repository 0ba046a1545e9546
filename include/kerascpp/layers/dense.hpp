// Dense: y = activation(x · kernel + bias), kernel (in, out) like Keras; applies to the last axis.
#pragma once
#include <optional>

#include "kerascpp/core/layer.hpp"

namespace kerascpp::layers {

/// Dense's settings, with Keras' names and defaults.
struct DenseOptions {
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
  std::optional<std::uint64_t> seed{};  ///< initializer seed; default draws from set_random_seed's stream
  /// The layer's name; "" gives it an automatic one from its class ("conv2d", "conv2d_1", ...).
  std::string name{};
  /// Keras' dtype: this layer's dtype policy ("float32", "mixed_bfloat16", "mixed_float16");
  /// "" takes the global policy (mixed_precision::set_global_policy).
  std::string dtype{};
};

/// Keras' Dense (make it with Dense()).
class DenseLayer : public Layer {
 public:
  /// `units` outputs from the last axis.
  DenseLayer(std::int64_t units, DenseOptions options);
  std::string class_name() const override { return "Dense"; }
  bool supports_masking() const override { return true; }  // the mask passes through, as in Keras
  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& in) override;
  void build(const std::vector<Shape>& in) override;
  std::vector<Tensor> forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) override;
  std::vector<Tensor> backward(ReplicaContext& ctx, const std::vector<Tensor>& in, const std::vector<Tensor>& out,
                               const std::vector<Tensor>& grads, LayerState& st) override;
  Json get_config() const override;
  LowPrecisionIO low_precision_io() const override;  // any, with a linear or relu activation
  /// The (in, units) kernel (after build).
  Variable& kernel() { return *kernel_; }
  /// The bias; nullptr without use_bias (or before build).
  Variable* bias() { return bias_; }

 private:
  std::int64_t units_;
  DenseOptions options_;
  ActivationFn activation_;
  Variable* kernel_ = nullptr;
  Variable* bias_ = nullptr;
};

/// Keras' Dense(units): activation(x · kernel + bias) over the last axis.
LayerRef Dense(std::int64_t units, DenseOptions options = {});

}  // namespace kerascpp::layers
