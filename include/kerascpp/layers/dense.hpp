// Dense: y = activation(x · kernel + bias), kernel (in, out) like Keras; applies to the last axis.
#pragma once
#include <optional>

#include "kerascpp/layer.hpp"

namespace kerascpp::layers {

struct DenseOptions {
  std::string activation = "linear";
  bool use_bias = true;
  initializers::Initializer kernel_initializer = "glorot_uniform";  // a name or initializers::Constant(v)
  initializers::Initializer bias_initializer = "zeros";
  regularizers::Regularizer kernel_regularizer{};  // e.g. regularizers::L2(1e-4) or "l2"
  regularizers::Regularizer bias_regularizer{};
  constraints::Constraint kernel_constraint{};  // e.g. constraints::MaxNorm(3)
  constraints::Constraint bias_constraint{};
  std::optional<std::uint64_t> seed{};  // initializer seed; default draws from set_random_seed's stream
  std::string name{};
  // Keras' dtype: this layer's dtype policy ("float32", "mixed_bfloat16", "mixed_float16");
  // "" takes the global policy (mixed_precision::set_global_policy).
  std::string dtype{};
};

class DenseLayer : public Layer {
 public:
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
  Variable& kernel() { return *kernel_; }
  Variable* bias() { return bias_; }

 private:
  std::int64_t units_;
  DenseOptions options_;
  ActivationFn activation_;
  Variable* kernel_ = nullptr;
  Variable* bias_ = nullptr;
};

LayerRef Dense(std::int64_t units, DenseOptions options = {});

}  // namespace kerascpp::layers
