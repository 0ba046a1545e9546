// Activation: applies any activation of keras.activations by name ("gelu", "swish", ...), or an
// ActivationFn with arguments (activations::leaky_relu(0.1f)). glu halves its axis; the rest keep
// the shape.
#pragma once
#include "kerascpp/layer.hpp"

namespace kerascpp::layers {

struct ActivationOptions {
  std::string name{};
};

class ActivationLayer : public Layer {
 public:
  ActivationLayer(const ActivationFn& activation, ActivationOptions options);
  std::string class_name() const override { return "Activation"; }
  bool supports_masking() const override { return true; }  // the mask passes through, as in Keras
  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& in) override;
  std::vector<Tensor> forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) override;
  std::vector<Tensor> backward(ReplicaContext& ctx, const std::vector<Tensor>& in, const std::vector<Tensor>& out,
                               const std::vector<Tensor>& grads, LayerState& st) override;
  Json get_config() const override;

 protected:
  const ActivationFn& activation() const { return activation_; }

 private:
  ActivationFn activation_;
};

// Activation("relu"), Activation("softmax", {.name = "probabilities"}),
// Activation(activations::gelu(/*approximate=*/true)).
LayerRef Activation(const std::string& activation, ActivationOptions options = {});
LayerRef Activation(const ActivationFn& activation, ActivationOptions options = {});

}  // namespace kerascpp::layers
