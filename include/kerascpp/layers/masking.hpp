// Masking: Keras' layers.Masking(mask_value=0.0). A step whose features all equal mask_value is
// masked: its output is zeros, and the layers after it that use masks (RNNs, attention, merges,
// the loss) skip it, as in Keras. The mask has the input's shape without the feature axis.
//   Masking({.mask_value = -1})  // (batch, steps, features) -> same, with a (batch, steps) mask
#pragma once
#include "kerascpp/core/layer.hpp"

namespace kerascpp::layers {

/// Options of Masking, with Keras' defaults.
struct MaskingOptions {
  float mask_value = 0.f;  ///< a step whose features all equal this is masked
  /// The layer's name; "" gives it an automatic one from its class ("conv2d", "conv2d_1", ...).
  std::string name{};
};

/// Keras' Masking: masks (and zeroes) the steps whose features all equal mask_value.
class MaskingLayer : public Layer {
 public:
  /// Masks the steps whose features all equal `options.mask_value`.
  explicit MaskingLayer(MaskingOptions options);
  std::string class_name() const override { return "Masking"; }
  bool creates_masks() const override { return true; }
  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& in) override { return {in[0]}; }
  std::vector<Tensor> forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) override;
  std::vector<Tensor> backward(ReplicaContext& ctx, const std::vector<Tensor>& in, const std::vector<Tensor>& out,
                               const std::vector<Tensor>& grads, LayerState& st) override;
  /// The mask forward() made: 1 where any feature differs from mask_value.
  std::vector<Tensor> compute_output_masks(ReplicaContext& ctx, const std::vector<Tensor>& in,
                                           const std::vector<Tensor>& out, const LayerState& st) override;
  Json get_config() const override;

 private:
  float mask_value_;
};

/// Masking() or Masking({.mask_value = -1}).
LayerRef Masking(MaskingOptions options = {});

}  // namespace kerascpp::layers
