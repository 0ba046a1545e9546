// CenterCrop: Keras' preprocessing layer that keeps the central height x width window of each
// (batch, height, width, channels) image; part of the model (saved in .keras, applied in predict).
#pragma once
#include "kerascpp/core/layer.hpp"

namespace kerascpp::layers {

/// CenterCrop's settings: only the layer's name.
struct CenterCropOptions {
  /// The layer's name; "" gives it an automatic one from its class ("center_crop", ...).
  std::string name{};
};

/// Keras' CenterCrop layer (channels_last). The window starts at ((H - height) / 2,
/// (W - width) / 2), rounded down as Keras does. Images smaller than the target, which Keras
/// crops to the aspect ratio and resizes up, are refused (ShapeError) here.
class CenterCropLayer : public Layer {
 public:
  /// Keeps the central `height` x `width` pixels.
  CenterCropLayer(std::int64_t height, std::int64_t width, CenterCropOptions options);
  std::string class_name() const override { return "CenterCrop"; }
  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& in) override;
  std::vector<Tensor> forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) override;
  std::vector<Tensor> backward(ReplicaContext& ctx, const std::vector<Tensor>& in, const std::vector<Tensor>& out,
                               const std::vector<Tensor>& grads, LayerState& st) override;
  Json get_config() const override;

 private:
  std::int64_t height_, width_;
};

/// Keras' CenterCrop(height, width).
LayerRef CenterCrop(std::int64_t height, std::int64_t width, CenterCropOptions options = {});

}  // namespace kerascpp::layers
