// RepeatVector: Keras' layers.RepeatVector(n), (batch, features) -> (batch, n, features).
#pragma once
#include "kerascpp/core/layer.hpp"

namespace kerascpp::layers {

/// Options of RepeatVector: only the layer's name.
struct RepeatVectorOptions {
  /// The layer's name; "" gives it an automatic one from its class ("conv2d", "conv2d_1", ...).
  std::string name{};
};

/// Keras' RepeatVector: each example's feature vector repeated n times along a new step axis.
class RepeatVectorLayer : public Layer {
 public:
  /// Repeats each example's features `n` times.
  RepeatVectorLayer(std::int64_t n, RepeatVectorOptions options);
  std::string class_name() const override { return "RepeatVector"; }
  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& in) override;
  std::vector<Tensor> forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) override;
  std::vector<Tensor> backward(ReplicaContext& ctx, const std::vector<Tensor>& in, const std::vector<Tensor>& out,
                               const std::vector<Tensor>& grads, LayerState& st) override;
  Json get_config() const override;

 private:
  std::int64_t n_;
};

/// RepeatVector(n): (batch, features) -> (batch, n, features).
LayerRef RepeatVector(std::int64_t n, RepeatVectorOptions options = {});

}  // namespace kerascpp::layers
