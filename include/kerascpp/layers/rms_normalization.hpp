// RMSNormalization: Keras' layers.RMSNormalization(axis=-1, epsilon=1e-6), each example's last
// axis divided by its root mean square, y = x / √(mean(x²) + ε) · scale, with a learned `scale`
// (ones at first). The last axis only; its mask passes through.
#pragma once
#include "kerascpp/core/layer.hpp"

namespace kerascpp::layers {

/// Options of RMSNormalization, with Keras' defaults.
struct RMSNormalizationOptions {
  /// Added to the mean square before the square root.
  float epsilon = 1e-6f;
  /// The layer's name; "" gives it an automatic one from its class ("conv2d", "conv2d_1", ...).
  std::string name{};
};

/// Keras' RMSNormalization over the last axis.
class RMSNormalizationLayer : public Layer {
 public:
  /// The `scale` weight is made by build().
  explicit RMSNormalizationLayer(RMSNormalizationOptions options);
  std::string class_name() const override { return "RMSNormalization"; }
  bool supports_masking() const override { return true; }
  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& in) override { return {in[0]}; }
  void build(const std::vector<Shape>& in) override;
  std::vector<Tensor> forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) override;
  std::vector<Tensor> backward(ReplicaContext& ctx, const std::vector<Tensor>& in, const std::vector<Tensor>& out,
                               const std::vector<Tensor>& grads, LayerState& st) override;
  Json get_config() const override;

 private:
  RMSNormalizationOptions options_;
  std::int64_t features_ = 0;
  Variable* scale_ = nullptr;
};

/// RMSNormalization() or RMSNormalization({.epsilon = 1e-5f}).
LayerRef RMSNormalization(RMSNormalizationOptions options = {});

}  // namespace kerascpp::layers
