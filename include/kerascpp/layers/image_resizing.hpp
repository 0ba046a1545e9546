// Resizing: Keras' preprocessing layer that resizes each (batch, height, width, channels) image to
// height x width (bilinear or nearest, as keras.ops.image.resize without antialiasing), optionally
// cropping it to the target's aspect ratio first; part of the model (saved in .keras, applied in
// predict). (kerascpp/layers/resizing.hpp holds the padding, cropping and upsampling layers.)
#pragma once
#include <string>

#include "kerascpp/core/layer.hpp"

namespace kerascpp::layers {

/// Resizing's settings beside the size, with Keras' defaults.
struct ResizingOptions {
  /// "bilinear" or "nearest" (Keras' other methods are not there yet).
  std::string interpolation = "bilinear";
  /// Crop the largest centred window of the target's aspect ratio before resizing (Keras'
  /// smart_resize), so the image is not distorted.
  bool crop_to_aspect_ratio = false;
  /// The layer's name; "" gives it an automatic one from its class ("resizing", ...).
  std::string name{};
};

/// Keras' Resizing layer (channels_last; pad_to_aspect_ratio and antialias not there yet).
class ResizingLayer : public Layer {
 public:
  /// Resizes to `height` x `width`.
  ResizingLayer(std::int64_t height, std::int64_t width, ResizingOptions options);
  std::string class_name() const override { return "Resizing"; }
  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& in) override;
  std::vector<Tensor> forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) override;
  std::vector<Tensor> backward(ReplicaContext& ctx, const std::vector<Tensor>& in, const std::vector<Tensor>& out,
                               const std::vector<Tensor>& grads, LayerState& st) override;
  Json get_config() const override;

 private:
  std::int64_t height_, width_;
  ResizingOptions options_;
};

/// Keras' Resizing(height, width, interpolation="bilinear", crop_to_aspect_ratio=False).
LayerRef Resizing(std::int64_t height, std::int64_t width, ResizingOptions options = {});

}  // namespace kerascpp::layers
