// Activation: applies relu, sigmoid, tanh, softmax (last axis) or linear.
#pragma once
#include "kerascpp/layer.hpp"

namespace kerascpp::layers {

struct ActivationOptions {
  std::string name{};
};

class ActivationLayer : public Layer {
 public:
  ActivationLayer(const std::string& activation, ActivationOptions options);
  std::string class_name() const override { return "Activation"; }
  bool supports_masking() const override { return true; }  // the mask passes through, as in Keras
  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& in) override;
  std::vector<Tensor> forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) override;
  std::vector<Tensor> backward(ReplicaContext& ctx, const std::vector<Tensor>& in, const std::vector<Tensor>& out,
                               const std::vector<Tensor>& grads, LayerState& st) override;
  Json get_config() const override;

 private:
  std::string activation_name_;
  ActivationKind activation_ = ActivationKind::linear;
};

// Activation("relu"), Activation("softmax", {.name = "probabilities"}).
LayerRef Activation(const std::string& activation, ActivationOptions options = {});

}  // namespace kerascpp::layers
