// LayerNormalization over the last axis, Keras defaults (epsilon 1e-3, center and scale on):
// each example's features normalised by their own mean and variance, then y = x̂·gamma + beta.
// No batch statistics, so training and inference compute the same thing.
#pragma once
#include "kerascpp/core/layer.hpp"

namespace kerascpp::layers {

/// LayerNormalization's settings, with Keras' names and defaults.
struct LayerNormalizationOptions {
  /// Added to the variance before its square root.
  float epsilon = 1e-3f;
  bool center = true;  ///< learn beta (shift)
  bool scale = true;   ///< learn gamma (scale)
  /// The layer's name; "" gives it an automatic one from its class ("conv2d", "conv2d_1", ...).
  std::string name{};
};

/// Keras' LayerNormalization over the last axis (make it with LayerNormalization()).
class LayerNormalizationLayer : public Layer {
 public:
  /// A layer with these settings; gamma and beta are made in build().
  explicit LayerNormalizationLayer(LayerNormalizationOptions options);
  std::string class_name() const override { return "LayerNormalization"; }
  bool supports_masking() const override { return true; }  // the mask passes through, as in Keras
  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& in) override;
  void build(const std::vector<Shape>& in) override;
  std::vector<Tensor> forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) override;
  std::vector<Tensor> backward(ReplicaContext& ctx, const std::vector<Tensor>& in, const std::vector<Tensor>& out,
                               const std::vector<Tensor>& grads, LayerState& st) override;
  Json get_config() const override;

 private:
  LayerNormalizationOptions options_;
  std::int64_t features_ = 0;
  Variable *gamma_ = nullptr, *beta_ = nullptr;  // null when scale / center is off
};

/// Keras' LayerNormalization(): each example's features normalised by their own mean and variance.
LayerRef LayerNormalization(LayerNormalizationOptions options = {});

}  // namespace kerascpp::layers
