// Add (elementwise sum of same-shaped inputs) and Concatenate (along an axis) for branching graphs.
#pragma once
#include "kerascpp/layer.hpp"

namespace kerascpp::layers {

struct AddOptions {
  std::string name{};
};

struct ConcatenateOptions {
  std::string name{};
};

class AddLayer : public Layer {
 public:
  explicit AddLayer(AddOptions options) : Layer(std::move(options.name)) {}
  std::string class_name() const override { return "Add"; }
  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& in) override;
  std::vector<Tensor> forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) override;
  std::vector<Tensor> backward(ReplicaContext& ctx, const std::vector<Tensor>& in, const std::vector<Tensor>& out,
                               const std::vector<Tensor>& grads, LayerState& st) override;
};

class ConcatenateLayer : public Layer {
 public:
  ConcatenateLayer(int axis, ConcatenateOptions options) : Layer(std::move(options.name)), axis_(axis) {}
  std::string class_name() const override { return "Concatenate"; }
  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& in) override;
  std::vector<Tensor> forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) override;
  std::vector<Tensor> backward(ReplicaContext& ctx, const std::vector<Tensor>& in, const std::vector<Tensor>& out,
                               const std::vector<Tensor>& grads, LayerState& st) override;
  std::string config_json() const override;

 private:
  int axis_;  // Keras axis including the batch axis; -1 = last
};

// Called on two or more inputs: Add()({a, b}), Concatenate(-1, {.name = "features"})({a, b}).
LayerRef Add(AddOptions options = {});
LayerRef Concatenate(int axis = -1, ConcatenateOptions options = {});

}  // namespace kerascpp::layers
