// Identity: Keras' layers.Identity, the input unchanged (a placeholder in a graph); its mask passes through.
#pragma once
#include "kerascpp/core/layer.hpp"

namespace kerascpp::layers {

/// Options of Identity: only the layer's name.
struct IdentityOptions {
  /// The layer's name; "" gives it an automatic one from its class ("conv2d", "conv2d_1", ...).
  std::string name{};
};

/// Keras' Identity layer: returns its input as it is.
class IdentityLayer : public Layer {
 public:
  /// An Identity named by `options`.
  explicit IdentityLayer(IdentityOptions options);
  std::string class_name() const override { return "Identity"; }
  bool supports_masking() const override { return true; }
  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& in) override { return {in[0]}; }
  std::vector<Tensor> forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) override;
  std::vector<Tensor> backward(ReplicaContext& ctx, const std::vector<Tensor>& in, const std::vector<Tensor>& out,
                               const std::vector<Tensor>& grads, LayerState& st) override;
  LowPrecisionIO low_precision_io() const override { return LowPrecisionIO::same_as_output; }
};

/// Identity(): the input, unchanged (Keras' layers.Identity).
LayerRef Identity(IdentityOptions options = {});

}  // namespace kerascpp::layers
