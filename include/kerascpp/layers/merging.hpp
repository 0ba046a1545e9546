// Elementwise merges of same-shaped inputs (Add, Subtract, Multiply, Average, Maximum, Minimum) and Concatenate
// (along an axis) for branching graphs, with Keras' names.
#pragma once
#include "kerascpp/core/layer.hpp"

namespace kerascpp::layers {

/// The settings of Add, Subtract, Multiply and Average.
struct AddOptions {
  /// The layer's name; "" gives it an automatic one from its class ("conv2d", "conv2d_1", ...).
  std::string name{};
};

/// Concatenate's settings.
struct ConcatenateOptions {
  /// The layer's name; "" gives it an automatic one from its class ("conv2d", "conv2d_1", ...).
  std::string name{};
};

/// Add, Subtract (exactly two inputs: a - b), Multiply (the product), Average (the mean), Maximum
/// and Minimum (elementwise).
enum class MergeOp { add, subtract, multiply, average, maximum, minimum };

/// Keras' Add, Subtract, Multiply and Average (make them with Add() and the others).
class ElementwiseMergeLayer : public Layer {
 public:
  /// The merge `op` of same-shaped inputs.
  explicit ElementwiseMergeLayer(AddOptions options, MergeOp op = MergeOp::add)
      : Layer(std::move(options.name)), op_(op) {}
  /// "Add", "Subtract", "Multiply" or "Average".
  std::string class_name() const override;
  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& in) override;
  std::vector<Tensor> forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) override;
  std::vector<Tensor> backward(ReplicaContext& ctx, const std::vector<Tensor>& in, const std::vector<Tensor>& out,
                               const std::vector<Tensor>& grads, LayerState& st) override;
  /// Keras' Merge.compute_mask: the AND of the inputs' masks.
  std::vector<Tensor> compute_output_masks(ReplicaContext& ctx, const std::vector<Tensor>& in,
                                           const std::vector<Tensor>& out, const LayerState& st) override;

 private:
  MergeOp op_;
};
using AddLayer = ElementwiseMergeLayer;  ///< its first name

/// Keras' Concatenate (make it with Concatenate()).
class ConcatenateLayer : public Layer {
 public:
  /// Joins the inputs along `axis` (batch axis included, -1 the last).
  ConcatenateLayer(int axis, ConcatenateOptions options) : Layer(std::move(options.name)), axis_(axis) {}
  std::string class_name() const override { return "Concatenate"; }
  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& in) override;
  std::vector<Tensor> forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) override;
  std::vector<Tensor> backward(ReplicaContext& ctx, const std::vector<Tensor>& in, const std::vector<Tensor>& out,
                               const std::vector<Tensor>& grads, LayerState& st) override;
  Json get_config() const override;
  /// Along the feature (last) axis: the AND of the inputs' step masks, as Keras' Concatenate.
  std::vector<Tensor> compute_output_masks(ReplicaContext& ctx, const std::vector<Tensor>& in,
                                           const std::vector<Tensor>& out, const LayerState& st) override;

 private:
  int axis_;  // Keras axis including the batch axis; -1 = last
};

// Called on two or more inputs: Add()({a, b}), Concatenate(-1, {.name = "features"})({a, b}).
/// Keras' Add(): the elementwise sum of the inputs.
LayerRef Add(AddOptions options = {});
/// Keras' Subtract(): a - b, exactly two inputs.
LayerRef Subtract(AddOptions options = {});
/// Keras' Multiply(): the elementwise product of the inputs.
LayerRef Multiply(AddOptions options = {});
/// Keras' Average(): the elementwise mean of the inputs.
LayerRef Average(AddOptions options = {});
/// Maximum()({a, b, ...}): the elementwise maximum of two or more same-shaped inputs (Keras' Maximum).
LayerRef Maximum(AddOptions options = {});
/// Minimum()({a, b, ...}): the elementwise minimum of two or more same-shaped inputs (Keras' Minimum).
LayerRef Minimum(AddOptions options = {});
/// Keras' Concatenate(axis): the inputs joined along `axis` (batch axis included, -1 the last).
LayerRef Concatenate(int axis = -1, ConcatenateOptions options = {});

}  // namespace kerascpp::layers
