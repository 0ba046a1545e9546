// Softmax: Keras' layers.Softmax(axis=-1), a softmax along any one axis of its input (the batch
// axis counts, negative axes count from the end). Attention scores use it over the key axis.
// No weights; Keras' optional `mask` argument is not taken (masks do not propagate yet).
#pragma once
#include "kerascpp/core/layer.hpp"

namespace kerascpp::layers {

/// Softmax's settings, with Keras' names and defaults.
struct SoftmaxOptions {
  /// The axis normalised (batch axis included; negative counts from the end).
  int axis = -1;
  /// The layer's name; "" gives it an automatic one from its class ("conv2d", "conv2d_1", ...).
  std::string name{};
};

/// Keras' Softmax layer (make it with Softmax()).
class SoftmaxLayer : public Layer {
 public:
  /// A softmax along options.axis.
  explicit SoftmaxLayer(SoftmaxOptions options);
  std::string class_name() const override { return "Softmax"; }
  bool supports_masking() const override { return true; }  // the mask passes through, as in Keras
  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& in) override;
  std::vector<Tensor> forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) override;
  std::vector<Tensor> backward(ReplicaContext& ctx, const std::vector<Tensor>& in, const std::vector<Tensor>& out,
                               const std::vector<Tensor>& grads, LayerState& st) override;
  Json get_config() const override;

 private:
  SoftmaxOptions options_;
};

/// Keras' Softmax(axis=-1): Softmax(), Softmax({.axis = 1}).
LayerRef Softmax(SoftmaxOptions options = {});

}  // namespace kerascpp::layers
