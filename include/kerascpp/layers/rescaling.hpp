// Rescaling: Keras' preprocessing layer x * scale + offset (e.g. pixels 0..255 to 0..1), part of
// the model: saved in .keras and applied in predict, in training and inference alike.
#pragma once
#include "kerascpp/core/layer.hpp"

namespace kerascpp::layers {

/// Rescaling's settings beside the scale.
struct RescalingOptions {
  /// Added after scaling: Rescaling(1 / 127.5, {.offset = -1}) maps 0..255 to -1..1.
  float offset = 0.f;
  /// The layer's name; "" gives it an automatic one from its class ("rescaling", ...).
  std::string name{};
};

/// Keras' Rescaling layer (scalar scale and offset).
class RescalingLayer : public Layer {
 public:
  /// x * scale + options.offset.
  RescalingLayer(float scale, RescalingOptions options);
  std::string class_name() const override { return "Rescaling"; }
  bool supports_masking() const override { return true; }  // the mask passes through, as in Keras
  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& in) override { return {in[0]}; }
  std::vector<Tensor> forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) override;
  std::vector<Tensor> backward(ReplicaContext& ctx, const std::vector<Tensor>& in, const std::vector<Tensor>& out,
                               const std::vector<Tensor>& grads, LayerState& st) override;
  Json get_config() const override;

 private:
  float scale_, offset_;
};

/// Keras' Rescaling(scale, offset=0): every value times `scale`, plus `offset`.
LayerRef Rescaling(float scale, RescalingOptions options = {});

}  // namespace kerascpp::layers
