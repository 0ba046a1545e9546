// UnitNormalization: Keras' layers.UnitNormalization(axis=-1), each feature vector scaled to unit
// L2 norm (x·min(1/‖x‖, 1/ε)); the last axis only. Its mask passes through.
#pragma once
#include "kerascpp/core/layer.hpp"

namespace kerascpp::layers {

/// Options of UnitNormalization (Keras' axis is the last one here).
struct UnitNormalizationOptions {
  /// The layer's name; "" gives it an automatic one from its class ("conv2d", "conv2d_1", ...).
  std::string name{};
};

/// Keras' UnitNormalization over the last axis.
class UnitNormalizationLayer : public Layer {
 public:
  /// A UnitNormalization named by `options`.
  explicit UnitNormalizationLayer(UnitNormalizationOptions options);
  std::string class_name() const override { return "UnitNormalization"; }
  bool supports_masking() const override { return true; }
  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& in) override { return {in[0]}; }
  std::vector<Tensor> forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) override;
  std::vector<Tensor> backward(ReplicaContext& ctx, const std::vector<Tensor>& in, const std::vector<Tensor>& out,
                               const std::vector<Tensor>& grads, LayerState& st) override;
  Json get_config() const override;
};

/// UnitNormalization(): each example's last axis scaled to unit L2 norm.
LayerRef UnitNormalization(UnitNormalizationOptions options = {});

}  // namespace kerascpp::layers
