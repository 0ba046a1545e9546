// Flatten and Reshape: change the per-example shape without touching the data (views, no copies).
#pragma once
#include "kerascpp/core/layer.hpp"

namespace kerascpp::layers {

/// Flatten's settings.
struct FlattenOptions {
  /// The layer's name; "" gives it an automatic one from its class ("conv2d", "conv2d_1", ...).
  std::string name{};
};

/// Reshape's settings.
struct ReshapeOptions {
  /// The layer's name; "" gives it an automatic one from its class ("conv2d", "conv2d_1", ...).
  std::string name{};
};

/// Keras' Flatten and Reshape (make them with Flatten() and Reshape()): views, no copies.
class ReshapeLayer : public Layer {
 public:
  /// target empty = Flatten.
  ReshapeLayer(Shape target, bool flatten, std::string name);
  /// "Flatten" or "Reshape".
  std::string class_name() const override { return flatten_ ? "Flatten" : "Reshape"; }
  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& in) override;
  std::vector<Tensor> forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) override;
  std::vector<Tensor> backward(ReplicaContext& ctx, const std::vector<Tensor>& in, const std::vector<Tensor>& out,
                               const std::vector<Tensor>& grads, LayerState& st) override;
  Json get_config() const override;
  /// 16-bit activations pass through in the output's dtype.
  LowPrecisionIO low_precision_io() const override { return LowPrecisionIO::same_as_output; }

 private:
  Shape resolve(const Shape& per_example) const;
  Shape target_;
  bool flatten_;
};

/// Keras' Flatten(): (batch, ...) -> (batch, product of the rest).
LayerRef Flatten(FlattenOptions options = {});
/// target_shape: the per-example shape (no batch axis); one dim may be -1. Reshape({28, 28, 1}).
LayerRef Reshape(Shape target_shape, ReshapeOptions options = {});

}  // namespace kerascpp::layers
