// Elementwise merges of same-shaped inputs (Add, Subtract, Multiply, Average, Maximum, Minimum) and Concatenate
// (along an axis) for branching graphs, with Keras' names.
#pragma once
#include "kerascpp/layer.hpp"

namespace kerascpp::layers {

struct AddOptions {
  std::string name{};
};

struct ConcatenateOptions {
  std::string name{};
};

// Add, Subtract (exactly two inputs: a - b), Multiply (the product), Average (the mean), Maximum
// and Minimum (elementwise).
enum class MergeOp { add, subtract, multiply, average, maximum, minimum };

class ElementwiseMergeLayer : public Layer {
 public:
  explicit ElementwiseMergeLayer(AddOptions options, MergeOp op = MergeOp::add)
      : Layer(std::move(options.name)), op_(op) {}
  std::string class_name() const override;
  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& in) override;
  std::vector<Tensor> forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) override;
  std::vector<Tensor> backward(ReplicaContext& ctx, const std::vector<Tensor>& in, const std::vector<Tensor>& out,
                               const std::vector<Tensor>& grads, LayerState& st) override;
  // Keras' Merge.compute_mask: the AND of the inputs' masks.
  std::vector<Tensor> compute_output_masks(ReplicaContext& ctx, const std::vector<Tensor>& in,
                                           const std::vector<Tensor>& out, const LayerState& st) override;

 private:
  MergeOp op_;
};
using AddLayer = ElementwiseMergeLayer;  // its first name

class ConcatenateLayer : public Layer {
 public:
  ConcatenateLayer(int axis, ConcatenateOptions options) : Layer(std::move(options.name)), axis_(axis) {}
  std::string class_name() const override { return "Concatenate"; }
  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& in) override;
  std::vector<Tensor> forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) override;
  std::vector<Tensor> backward(ReplicaContext& ctx, const std::vector<Tensor>& in, const std::vector<Tensor>& out,
                               const std::vector<Tensor>& grads, LayerState& st) override;
  Json get_config() const override;
  // Along the feature (last) axis: the AND of the inputs' step masks, as Keras' Concatenate.
  std::vector<Tensor> compute_output_masks(ReplicaContext& ctx, const std::vector<Tensor>& in,
                                           const std::vector<Tensor>& out, const LayerState& st) override;

 private:
  int axis_;  // Keras axis including the batch axis; -1 = last
};

// Called on two or more inputs: Add()({a, b}), Concatenate(-1, {.name = "features"})({a, b}).
LayerRef Add(AddOptions options = {});
LayerRef Subtract(AddOptions options = {});
LayerRef Multiply(AddOptions options = {});
LayerRef Average(AddOptions options = {});
/// Maximum()({a, b, ...}): the elementwise maximum of two or more same-shaped inputs (Keras' Maximum).
LayerRef Maximum(AddOptions options = {});
/// Minimum()({a, b, ...}): the elementwise minimum of two or more same-shaped inputs (Keras' Minimum).
LayerRef Minimum(AddOptions options = {});
LayerRef Concatenate(int axis = -1, ConcatenateOptions options = {});

}  // namespace kerascpp::layers
