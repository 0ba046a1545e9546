// Activation: applies any activation of keras.activations by name ("gelu", "swish", ...), or an
// ActivationFn with arguments (activations::leaky_relu(0.1f)). glu halves its axis; the rest keep
// the shape.
#pragma once
#include "kerascpp/core/layer.hpp"

namespace kerascpp::layers {

/// Activation's settings.
struct ActivationOptions {
  /// The layer's name; "" gives it an automatic one from its class ("conv2d", "conv2d_1", ...).
  std::string name{};
};

/// Keras' Activation layer (make it with Activation()).
class ActivationLayer : public Layer {
 public:
  /// Applies `activation`, an activation of keras.activations with its arguments.
  ActivationLayer(const ActivationFn& activation, ActivationOptions options);
  std::string class_name() const override { return "Activation"; }
  bool supports_masking() const override { return true; }  // the mask passes through, as in Keras
  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& in) override;
  std::vector<Tensor> forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) override;
  std::vector<Tensor> backward(ReplicaContext& ctx, const std::vector<Tensor>& in, const std::vector<Tensor>& out,
                               const std::vector<Tensor>& grads, LayerState& st) override;
  Json get_config() const override;

 protected:
  /// The activation applied, for the subclasses' get_config().
  const ActivationFn& activation() const { return activation_; }

 private:
  ActivationFn activation_;
};

/// Activation("relu"), Activation("softmax", {.name = "probabilities"}): any keras.activations name;
/// ValueError for an unknown one.
LayerRef Activation(const std::string& activation, ActivationOptions options = {});
/// Activation(activations::gelu(/*approximate=*/true)): an activation with its arguments.
LayerRef Activation(const ActivationFn& activation, ActivationOptions options = {});

}  // namespace kerascpp::layers
