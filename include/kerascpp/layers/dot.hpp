// Keras' Dot merge layer: the batch dot product of two inputs over one axis of each
// (keras.layers.Dot(axes, normalize=False)), for 2-D and 3-D inputs (batch axis included).
#pragma once
#include <utility>

#include "kerascpp/core/layer.hpp"

namespace kerascpp::layers {

/// Dot's settings.
struct DotOptions {
  bool normalize = false;  ///< L2-normalize both inputs along their dot axes first (cosine similarity)
  /// The layer's name; "" gives it an automatic one from its class ("conv2d", "conv2d_1", ...).
  std::string name{};
};

/// Keras' Dot merge layer (make it with Dot()).
class DotLayer : public Layer {
 public:
  /// axes as Keras writes them: one int for both inputs, or one per input; batch axis included
  /// (0 is not allowed), negative counts from the end of each input.
  DotLayer(int axes_a, int axes_b, bool single_int, DotOptions options);
  std::string class_name() const override { return "Dot"; }
  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& in) override;
  std::vector<Tensor> forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) override;
  std::vector<Tensor> backward(ReplicaContext& ctx, const std::vector<Tensor>& in, const std::vector<Tensor>& out,
                               const std::vector<Tensor>& grads, LayerState& st) override;
  /// Takes masked inputs; Keras' Dot.compute_mask: the output carries no mask.
  bool supports_masking() const override { return true; }
  /// No mask on the output, whatever the inputs carry.
  std::vector<Tensor> compute_output_masks(ReplicaContext&, const std::vector<Tensor>&, const std::vector<Tensor>&,
                                           const LayerState&) override {
    return {Tensor()};
  }
  Json get_config() const override;

 private:
  // The dot axes of inputs of these ranks (batch included), checked.
  std::pair<int, int> resolve_axes(std::size_t rank_a, std::size_t rank_b) const;

  int axes_[2];
  bool single_int_;  // config writes "axes": 1 rather than [1, 1]
  bool normalize_;
};

/// @{
/// Keras' Dot(axes): the batch dot product of two inputs over one axis of each (one int for both,
/// or a pair). Dot(1)({a, b}), Dot({1, 2})({a, b}), Dot(-1, {.normalize = true})({a, b}).
LayerRef Dot(int axes, DotOptions options = {});
LayerRef Dot(std::pair<int, int> axes, DotOptions options = {});
/// @}

}  // namespace kerascpp::layers
