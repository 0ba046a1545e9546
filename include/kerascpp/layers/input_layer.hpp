// Input: the entry point of a functional model; Input({28, 28, 1}) is a (None, 28, 28, 1) tensor.
#pragma once
#include "kerascpp/core/layer.hpp"

namespace kerascpp {

/// Keras' layers (keras.layers): a factory function per layer class, returning a LayerRef.
namespace layers {

/// InputLayer's settings.
struct InputLayerOptions {
  /// The dtype of the input tensors.
  DType dtype = DType::float32;
  /// The layer's name; "" gives it an automatic one from its class ("conv2d", "conv2d_1", ...).
  std::string name{};
};

/// The layer behind Input() and layers::InputLayer() (Keras' keras.layers.InputLayer class; named
/// InputLayerImpl so that layers::InputLayer is, like layers::Dense, the factory a user calls).
class InputLayerImpl : public Layer {
 public:
  /// An input of per-example shape `shape` (no batch axis).
  InputLayerImpl(Shape shape, InputLayerOptions options);
  std::string class_name() const override { return "InputLayer"; }
  std::vector<Shape> compute_output_shapes(const std::vector<Shape>&) override { return {shape_}; }
  std::vector<Tensor> forward(ReplicaContext&, const std::vector<Tensor>& in, LayerState&) override { return in; }
  std::vector<Tensor> backward(ReplicaContext&, const std::vector<Tensor>&, const std::vector<Tensor>&,
                               const std::vector<Tensor>& grads, LayerState&) override {
    return grads;
  }
  Json get_config() const override;
  /// The per-example shape.
  const Shape& shape() const { return shape_; }
  /// The dtype of the input.
  DType dtype() const { return dtype_; }
  /// The symbolic tensor this layer produces.
  KerasTensor output();

 private:
  Shape shape_;
  DType dtype_;
  // Weak: the node holds this layer (Node::layer), so a strong pointer back would be a cycle that
  // leaked every model's input layer and node (found by LeakSanitizer). While anyone holds the
  // tensor, output() returns the same node; once nobody does, a new one is as good.
  std::weak_ptr<Node> output_node_;
};

/// For Sequential models: Sequential({layers::InputLayer({784}), layers::Dense(10)}).
LayerRef InputLayer(Shape shape, InputLayerOptions options = {});

}  // namespace layers

/// A model input of per-example shape `shape` (no batch axis). Unlike the layer factories, dtype
/// and name are positional: Input returns a tensor rather than a layer, and its arguments follow
/// the order of Keras' keras.Input(shape, ..., dtype, ..., name), the one call every model makes.
KerasTensor Input(Shape shape, DType dtype = DType::float32, std::string name = "");

}  // namespace kerascpp
