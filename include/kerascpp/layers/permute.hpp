// Permute: Keras' layers.Permute(dims), the per-example axes reordered (the batch axis stays first).
//   Permute({2, 1})  // (batch, steps, features) -> (batch, features, steps)
#pragma once
#include <vector>

#include "kerascpp/core/layer.hpp"

namespace kerascpp::layers {

/// Options of Permute: only the layer's name.
struct PermuteOptions {
  /// The layer's name; "" gives it an automatic one from its class ("conv2d", "conv2d_1", ...).
  std::string name{};
};

/// Keras' Permute: output axis i is input axis dims[i] (1-based, the batch axis not counted).
class PermuteLayer : public Layer {
 public:
  /// Reorders the per-example axes as `dims` (1-based); ValueError unless a permutation.
  PermuteLayer(std::vector<int> dims, PermuteOptions options);
  std::string class_name() const override { return "Permute"; }
  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& in) override;
  std::vector<Tensor> forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) override;
  std::vector<Tensor> backward(ReplicaContext& ctx, const std::vector<Tensor>& in, const std::vector<Tensor>& out,
                               const std::vector<Tensor>& grads, LayerState& st) override;
  Json get_config() const override;

 private:
  std::vector<int> dims_;  // Keras' dims: a permutation of 1..rank-1
};

/// Permute(dims): dims is a permutation of 1..n over the n per-example axes, as in Keras.
LayerRef Permute(std::vector<int> dims, PermuteOptions options = {});

}  // namespace kerascpp::layers
