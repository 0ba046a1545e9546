// Bidirectional: Keras 3's layers.Bidirectional(layer, merge_mode, backward_layer) around an RNN
// layer (LSTM, GRU, SimpleRNN). As in Keras, the wrapper remakes `layer` from its config as
// "forward_<name>" and, unless a backward_layer is given, a copy reading the steps backwards
// (go_backwards=True) as "backward_<name>"; both output zeros at masked steps when they return
// sequences (zero_output_for_mask), and the backward sequence is put back in input order before
// the two are merged. With return_state the outputs are [merged, forward states..., backward
// states...] ([forward, backward, states...] for merge_mode None). The weights sit under Keras'
// forward_layer/ and backward_layer/ groups, so .weights.h5 and .keras files move both ways.
#pragma once
#include <optional>
#include <string>

#include "kerascpp/core/layer.hpp"

namespace kerascpp::layers {

/// The settings of Bidirectional, with Keras' names and defaults.
struct BidirectionalOptions {
  /// How the two directions' outputs combine: "concat", "sum", "mul", "ave", or std::nullopt
  /// (Keras' None: both are returned, forward first).
  std::optional<std::string> merge_mode = "concat";
  /// The layer reading the steps backwards; unset: a copy of the wrapped layer with go_backwards.
  LayerRef backward_layer{};
  /// The layer's name; "" gives it an automatic one ("bidirectional", "bidirectional_1", ...).
  std::string name{};
};

/// Runs an RNN layer over the steps in both directions and merges the outputs.
class BidirectionalLayer : public Layer {
 public:
  /// Wraps `layer` (an LSTM, GRU or SimpleRNN); ValueError for another layer or merge mode.
  BidirectionalLayer(const LayerRef& layer, BidirectionalOptions options);
  std::string class_name() const override { return "Bidirectional"; }
  bool supports_masking() const override { return true; }
  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& in) override;
  void build(const std::vector<Shape>& in) override;
  std::vector<Tensor> forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) override;
  std::vector<Tensor> backward(ReplicaContext& ctx, const std::vector<Tensor>& in, const std::vector<Tensor>& out,
                               const std::vector<Tensor>& grads, LayerState& st) override;
  std::vector<Tensor> compute_output_masks(ReplicaContext& ctx, const std::vector<Tensor>& in,
                                           const std::vector<Tensor>& out, const LayerState& st) override;
  std::vector<WeightGroup> weight_groups() override;
  Json get_config() const override;
  /// The forward-reading layer ("forward_<name>").
  const LayerRef& forward_layer() const { return forward_; }
  /// The backward-reading layer ("backward_<name>").
  const LayerRef& backward_layer() const { return backward_; }

 private:
  std::size_t state_count() const;  // per direction
  std::optional<std::string> merge_mode_;
  LayerRef forward_, backward_;
  bool return_sequences_ = false, return_state_ = false;
};

// Bidirectional(LSTM(16, {.return_sequences = true})), Bidirectional(GRU(8), {.merge_mode = "sum"})
/// Keras' Bidirectional(layer) over (batch, steps, features).
LayerRef Bidirectional(const LayerRef& layer, BidirectionalOptions options = {});

}  // namespace kerascpp::layers
