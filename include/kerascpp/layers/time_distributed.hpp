// TimeDistributed: Keras 3's layers.TimeDistributed(layer): the same layer (one set of weights)
// applied to every step of a (batch, steps, ...) input, as one call on (batch·steps, ...). The
// input's [batch, steps] mask passes through to the output; the wrapped layer sees none. Its
// weights sit under Keras' "layer" group.
#pragma once
#include <string>

#include "kerascpp/core/layer.hpp"

namespace kerascpp::layers {

/// Applies a layer to each step of a sequence.
class TimeDistributedLayer : public Layer {
 public:
  /// Wraps `layer`, which must take one input and give one output.
  TimeDistributedLayer(LayerRef layer, std::string name);
  std::string class_name() const override { return "TimeDistributed"; }
  bool supports_masking() const override { return true; }
  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& in) override;
  void build(const std::vector<Shape>& in) override;
  std::vector<Tensor> forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) override;
  std::vector<Tensor> backward(ReplicaContext& ctx, const std::vector<Tensor>& in, const std::vector<Tensor>& out,
                               const std::vector<Tensor>& grads, LayerState& st) override;
  std::vector<WeightGroup> weight_groups() override;
  Json get_config() const override;
  /// The wrapped layer.
  const LayerRef& layer() const { return layer_; }

 private:
  LayerRef layer_;
};

// TimeDistributed(Dense(8)), TimeDistributed(Conv2D(4, 3)) on (batch, steps, h, w, c)
/// Keras' TimeDistributed(layer) over (batch, steps, ...).
LayerRef TimeDistributed(LayerRef layer, std::string name = "");

}  // namespace kerascpp::layers
