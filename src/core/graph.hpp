// Graph: the layers of a model in topological order, and the forward/backward executor that a
// replica runs. Per-replica activations and layer state live in a GraphState owned by the caller.
#pragma once
#include <functional>
#include <memory>
#include <unordered_map>
#include <vector>

#include "kerascpp/core/layer.hpp"

namespace kerascpp::detail {

struct GraphState {
  std::vector<std::vector<Tensor>> inputs;   // per node: the tensors it was called on
  std::vector<std::vector<Tensor>> outputs;  // per node
  std::vector<LayerState> layer_states;      // per node
  std::vector<std::vector<Tensor>> masks;    // per node: its outputs' Keras masks (undefined: none)
};

class Graph {
 public:
  Graph(const std::vector<KerasTensor>& inputs, const std::vector<KerasTensor>& outputs);

  // Distinct layers in Keras' model.layers order (keras_layer_order): the order of to_json(),
  // the .weights.h5 group names and get_weights().
  const std::vector<std::shared_ptr<Layer>>& layers() const { return layers_; }
  const std::vector<std::shared_ptr<Node>>& nodes() const { return nodes_; }
  const std::vector<KerasTensor>& inputs() const { return inputs_; }
  const std::vector<KerasTensor>& outputs() const { return outputs_; }
  // What each model input takes, as Keras' Functional.input_spec: the Input's full shape (any batch
  // size) and dtype.
  const std::vector<InputSpec>& input_specs() const { return input_specs_; }

  // Throws ShapeError unless `inputs` match the model's Inputs in count, per-example shape and
  // dtype (input_specs()). The steps call it on the global batch before sharding, so the error
  // shows the batch the user gave; forward() checks again for custom loops that pass shards directly.
  void check_inputs(const std::vector<Tensor>& inputs) const;
  std::vector<Tensor> forward(ReplicaContext& ctx, const std::vector<Tensor>& inputs, GraphState& state) const;
  // The Keras masks of the model's outputs after forward() (undefined where an output has none).
  std::vector<Tensor> output_masks(const GraphState& state) const;
  // Whether some layer makes masks (Layer::creates_masks), so an output may carry one.
  bool creates_masks() const;
  // Backpropagates from output gradients. `on_layer_done` fires when every call of a layer has
  // been backpropagated, so its variable gradients are final (used to start all-reduces early).
  void backward(ReplicaContext& ctx, const std::vector<Tensor>& output_grads, GraphState& state,
                const std::function<void(Layer&)>& on_layer_done) const;
  // A replica with an empty shard: lets layers take part in collectives, in the same order.
  void forward_empty(ReplicaContext& ctx) const;
  void backward_empty(ReplicaContext& ctx, const std::function<void(Layer&)>& on_layer_done) const;

 private:
  std::size_t node_index(const Node* n) const;
  // Per node, the dtype its outputs travel in on `backend` (activation_dtypes in graph.cpp).
  std::vector<DType> activation_dtypes(Backend& backend) const;
  // node's inputs as its layer takes them (Layer::low_precision_io), 16-bit ones cast where needed.
  std::vector<Tensor> inputs_as_taken(ReplicaContext& ctx, const Node& node, DType output_dtype,
                                      std::vector<Tensor> inputs) const;
  static std::vector<std::shared_ptr<Layer>> keras_layer_order(
      const std::vector<std::shared_ptr<Node>>& post_order,
      const std::unordered_map<const Layer*, std::size_t>& first_reached);
  std::vector<KerasTensor> inputs_, outputs_;
  std::vector<InputSpec> input_specs_;
  std::vector<std::shared_ptr<Node>> nodes_;  // topological order
  std::vector<std::shared_ptr<Layer>> layers_;
  std::vector<int> layer_of_node_;  // index into layers_
  std::vector<int> calls_per_layer_;
  std::unordered_map<const Node*, std::size_t> index_of_;
  std::vector<char> need_input_grads_;               // per node: does any input lead back to a trainable variable?
  std::vector<std::vector<std::size_t>> consumers_;  // per node: the nodes that take one of its outputs
  std::vector<char> relu_backward_moved_;            // per node: its ReLU's backward runs in its consumer (LayerState)
  std::vector<char> relu_forward_moved_;             // per node: and its forward too (LayerState)
  std::vector<char> is_model_output_;                // per node: does the model output one of its outputs?
};

}  // namespace kerascpp::detail
