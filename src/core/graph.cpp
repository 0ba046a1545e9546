#include "core/graph.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "check.hpp"
#include "core/knobs.hpp"
#include "kerascpp/layers/input_layer.hpp"

namespace kerascpp::detail {

Graph::Graph(const std::vector<KerasTensor>& inputs, const std::vector<KerasTensor>& outputs)
    : inputs_(inputs), outputs_(outputs) {
  KERASCPP_CHECK_VALUE(!inputs.empty() && !outputs.empty(), "Model: needs at least one input and one output");
  for (auto& t : inputs)
    KERASCPP_CHECK_VALUE(t.defined() && dynamic_cast<layers::InputLayerImpl*>(t.node()->layer.get()),
                         "Model: every input must be a tensor returned by kerascpp::Input(shape)");
  for (auto& t : inputs) {
    const auto& input = static_cast<const layers::InputLayerImpl&>(*t.node()->layer);
    InputSpec spec{.ndim = static_cast<int>(input.shape().size()) + 1, .dtype = input.dtype()};
    for (std::size_t a = 0; a < input.shape().size(); ++a) spec.axes[static_cast<int>(a) + 1] = input.shape()[a];
    input_specs_.push_back(std::move(spec));
  }
  // Depth-first post-order from the outputs gives a topological order. `first_reached` numbers
  // the layers in the order the walk first enters them (Keras' operation_indices).
  std::unordered_set<const Node*> done, active;
  std::unordered_map<const Layer*, std::size_t> first_reached;
  std::function<void(const std::shared_ptr<Node>&)> visit = [&](const std::shared_ptr<Node>& n) {
    if (done.count(n.get())) return;
    KERASCPP_CHECK_VALUE(!active.count(n.get()), "Model: the layer graph has a cycle");
    first_reached.emplace(n->layer.get(), first_reached.size());
    active.insert(n.get());
    for (auto& in : n->inputs) visit(in.node());
    active.erase(n.get());
    done.insert(n.get());
    nodes_.push_back(n);
  };
  for (auto& o : outputs) {
    KERASCPP_CHECK_VALUE(o.defined(), "Model: an output tensor is empty");
    visit(o.node());
  }
  for (auto& n : nodes_)
    if (dynamic_cast<layers::InputLayerImpl*>(n->layer.get()) &&
        std::none_of(inputs.begin(), inputs.end(), [&](const KerasTensor& t) { return t.node() == n; }))
      throw ValueError(
          fmt::format("Model: the outputs depend on input '{}', which is not among the model's inputs; pass "
                      "it in Model(inputs, outputs)",
                      n->layer->name()));
  for (std::size_t i = 0; i < nodes_.size(); ++i) index_of_[nodes_[i].get()] = i;
  // A node's output depends on a trainable variable if its layer has one or any input does.
  std::vector<char> depends_on_variables(nodes_.size(), 0);
  need_input_grads_.assign(nodes_.size(), 0);
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    for (auto& in : nodes_[i]->inputs)
      if (depends_on_variables[index_of_.at(in.node().get())]) need_input_grads_[i] = 1;
    depends_on_variables[i] = need_input_grads_[i] || nodes_[i]->layer->needs_gradient();
  }
  consumers_.assign(nodes_.size(), {});
  for (std::size_t i = 0; i < nodes_.size(); ++i)
    for (auto& in : nodes_[i]->inputs) consumers_[index_of_.at(in.node().get())].push_back(i);
  is_model_output_.assign(nodes_.size(), 0);
  for (auto& o : outputs) is_model_output_[index_of_.at(o.node().get())] = 1;
  // The ReLU-into-max-pooling fusion (LayerState::output_grad_past_relu): a node that ends in a
  // ReLU, has one output that the model does not output, and feeds one node, once, whose layer
  // absorbs the ReLU's backward and takes that single input. Its forward moves too where that
  // layer also absorbs it (LayerState::output_relu_deferred).
  relu_backward_moved_.assign(nodes_.size(), 0);
  relu_forward_moved_.assign(nodes_.size(), 0);
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    if (!nodes_[i]->layer->ends_in_relu() || is_model_output_[i] || nodes_[i]->output_shapes.size() != 1 ||
        consumers_[i].size() != 1)
      continue;
    const Node& c = *nodes_[consumers_[i][0]];
    relu_backward_moved_[i] = c.inputs.size() == 1 && c.layer->absorbs_input_relu_backward();
    relu_forward_moved_[i] = relu_backward_moved_[i] && c.layer->absorbs_input_relu_forward();
  }
  layers_ = keras_layer_order(nodes_, first_reached);
  std::unordered_map<const Layer*, int> index;
  for (std::size_t i = 0; i < layers_.size(); ++i) index[layers_[i].get()] = static_cast<int>(i);
  calls_per_layer_.assign(layers_.size(), 0);
  for (auto& n : nodes_) {
    const int li = index.at(n->layer.get());
    layer_of_node_.push_back(li);
    ++calls_per_layer_[static_cast<std::size_t>(li)];
  }
}

// Keras' Functional.layers order (keras/src/ops/function.py map_graph), which matters beyond
// display: Keras names a model's .weights.h5 groups by class and position in that list (dense,
// dense_1, ...), and orders get_weights() and the optimizer's variables by it. A node's depth is
// one more than the largest depth of the nodes it feeds (an output's is 0), a layer's the largest
// of its nodes'; layers go by decreasing depth, ties in the order the walk from the outputs first
// reached them. So a branch of Dense layers shorter than its sibling lists after it whichever
// was created first. `post_order`: the nodes, producers before consumers.
std::vector<std::shared_ptr<Layer>> Graph::keras_layer_order(
    const std::vector<std::shared_ptr<Node>>& post_order,
    const std::unordered_map<const Layer*, std::size_t>& first_reached) {
  std::unordered_map<const Node*, int> node_depth;
  std::unordered_map<const Layer*, int> layer_depth;
  std::vector<std::shared_ptr<Layer>> layers;
  for (auto it = post_order.rbegin(); it != post_order.rend(); ++it) {  // consumers first
    const Node* n = it->get();
    auto [slot, fresh] = layer_depth.emplace(n->layer.get(), 0);
    if (fresh) layers.push_back(n->layer);
    const int depth = std::max(node_depth[n], slot->second);  // a shared layer keeps its deepest call's depth
    slot->second = depth;
    for (auto& in : n->inputs) {
      int& d = node_depth[in.node().get()];
      d = std::max(d, depth + 1);
    }
  }
  std::stable_sort(layers.begin(), layers.end(), [&](const auto& a, const auto& b) {
    const int da = layer_depth.at(a.get()), db = layer_depth.at(b.get());
    return da != db ? da > db : first_reached.at(a.get()) < first_reached.at(b.get());
  });
  return layers;
}

std::size_t Graph::node_index(const Node* n) const {
  auto it = index_of_.find(n);
  KERASCPP_CHECK_VALUE(it != index_of_.end(), "Graph: node not part of this model");
  return it->second;
}

void Graph::check_inputs(const std::vector<Tensor>& inputs) const {
  KERASCPP_CHECK_VALUE(inputs.size() == inputs_.size(), "Model expects {} input(s) but got {}", inputs_.size(),
                       inputs.size());
  for (std::size_t k = 0; k < inputs_.size(); ++k) {
    const auto* input_layer = dynamic_cast<const layers::InputLayerImpl*>(inputs_[k].node()->layer.get());
    const Tensor& x = inputs[k];
    const InputSpec& spec = input_specs_[k];
    if (spec.mismatch(x.shape(), x.dtype()).empty()) continue;
    // The message speaks of the model's Input (batches, the dataset) rather than a layer's input.
    Shape expected = input_layer->shape();
    Shape got(x.shape().begin() + (x.rank() ? 1 : 0), x.shape().end());
    KERASCPP_CHECK_SHAPE(x.rank() != 0 && got == expected,
                         "Input '{}' expects batches of shape {} but got {}; check the dataset's element "
                         "shape or the Input shape",
                         input_layer->name(), shape_str([&] {
                           Shape s = expected;
                           s.insert(s.begin(), -1);
                           return s;
                         }()),
                         shape_str(x.shape()));
    KERASCPP_CHECK_SHAPE(x.dtype() == input_layer->dtype(),
                         "Input '{}' expects dtype {} but got {}; cast the data (e.g. images to float32 "
                         "scaled to [0, 1]) or declare Input(shape, DType::{})",
                         input_layer->name(), dtype_name(input_layer->dtype()), dtype_name(x.dtype()),
                         dtype_name(x.dtype()));
  }
}

namespace {

// The backend computes a layer's matmuls and convolutions in the layer's compute dtype (its
// dtype policy) for the duration of one forward or backward, and in float32 outside.
class ComputeDTypeScope {
 public:
  ComputeDTypeScope(Backend& backend, DType dtype) : backend_(backend), previous_(backend.compute_dtype()) {
    backend_.set_compute_dtype(dtype);
  }
  ~ComputeDTypeScope() { backend_.set_compute_dtype(previous_); }
  ComputeDTypeScope(const ComputeDTypeScope&) = delete;
  ComputeDTypeScope& operator=(const ComputeDTypeScope&) = delete;

 private:
  Backend& backend_;
  DType previous_;
};

// A gradient in the dtype of the activation it belongs to.
Tensor in_dtype(Backend& backend, const Tensor& t, DType dtype) {
  if (t.dtype() == dtype || !is_float(t.dtype()) || !is_float(dtype)) return t;
  Tensor out;
  backend.cast(t, dtype, out);
  return out;
}

}  // namespace

// Mixed precision's 16-bit activations (Layer::low_precision_io): a node outputs in its layer's
// 16-bit compute dtype when the backend keeps activations in it, the layer can write it, the
// model does not output it (outputs, and so losses and metrics, stay float32), and every node
// taking it reads that dtype without a cast: an `any` layer of the same compute dtype, or a
// `same_as_output` one that outputs 16 bits itself (so a pooling layer before a float32 one
// works in float32 rather than after a cast). Consumers come later in nodes_, so one backward
// walk decides that. A `same_as_output` layer whose input arrives in float32 (after a model
// Input, BatchNormalization, Dropout) stays float32 too, rather than casting its larger input:
// a forward walk settles that, and only widens (its producers were float32 already).
std::vector<DType> Graph::activation_dtypes(Backend& backend) const {
  std::vector<DType> dtypes(nodes_.size(), DType::float32);
  for (std::size_t i = nodes_.size(); i-- > 0;) {
    const Layer& layer = *nodes_[i]->layer;
    const DType dt = layer.compute_dtype();
    if (!is_low_precision(dt) || layer.low_precision_io() == Layer::LowPrecisionIO::none || is_model_output_[i] ||
        nodes_[i]->output_shapes.size() != 1 || consumers_[i].empty() || !backend.low_precision_activations(dt))
      continue;
    const bool consumers_take_it = std::all_of(consumers_[i].begin(), consumers_[i].end(), [&](std::size_t c) {
      const Layer& consumer = *nodes_[c]->layer;
      const auto io = consumer.low_precision_io();
      return consumer.compute_dtype() == dt &&
             (io == Layer::LowPrecisionIO::any || (io == Layer::LowPrecisionIO::same_as_output && dtypes[c] == dt));
    });
    if (consumers_take_it) dtypes[i] = dt;
  }
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    if (dtypes[i] == DType::float32 || nodes_[i]->layer->low_precision_io() != Layer::LowPrecisionIO::same_as_output)
      continue;
    for (const KerasTensor& in : nodes_[i]->inputs)
      if (dtypes[index_of_.at(in.node().get())] != dtypes[i]) dtypes[i] = DType::float32;
  }
  return dtypes;
}

// For a `none` layer this casts only 16-bit model Inputs (the plan gives it no 16-bit producer),
// as Keras autocasts a layer's floating inputs to its compute dtype.
std::vector<Tensor> Graph::inputs_as_taken(ReplicaContext& ctx, const Node& node, DType output_dtype,
                                           std::vector<Tensor> inputs) const {
  const auto io = node.layer->low_precision_io();
  if (io == Layer::LowPrecisionIO::any) return inputs;
  const DType want = io == Layer::LowPrecisionIO::same_as_output ? output_dtype : DType::float32;
  for (Tensor& t : inputs)
    if (t.defined()) t = in_dtype(*ctx.backend, t, want);
  return inputs;
}

std::vector<Tensor> Graph::forward(ReplicaContext& ctx, const std::vector<Tensor>& inputs, GraphState& st) const {
  std::size_t n = nodes_.size();
  st.inputs.resize(n);
  st.outputs.resize(n);
  st.layer_states.resize(n);
  st.masks.resize(n);
  check_inputs(inputs);
  const std::vector<DType> dtypes = activation_dtypes(*ctx.backend);
  // KERASCPP_GPU_PHASES=layers: each layer of an inference forward is a phase of its own.
  static const bool mark_layers = [] {
    const char* env = ::kerascpp::detail::knob("KERASCPP_GPU_PHASES");
    return env && std::string_view(env) == "layers";
  }();
  const bool marking = mark_layers && !ctx.training;
  for (std::size_t i = 0; i < n; ++i) {
    const Node& node = *nodes_[i];
    if (marking) ctx.backend->mark_phase(node.layer->class_name().c_str());
    if (dynamic_cast<layers::InputLayerImpl*>(node.layer.get())) {
      std::size_t k = 0;
      while (inputs_[k].node().get() != &node) ++k;
      const Tensor& x = inputs[k];
      st.inputs[i] = {x};
      st.outputs[i] = {x};
      st.masks[i] = {Tensor()};
      continue;
    }
    auto& ins = st.inputs[i];
    LayerState& ls = st.layer_states[i];
    ins.clear();
    ls.input_masks.clear();
    bool any_mask = false;
    for (auto& kt : node.inputs) {
      const std::size_t from = node_index(kt.node().get()), at = static_cast<std::size_t>(kt.index());
      ins.push_back(st.outputs[from].at(at));
      ls.input_masks.push_back(st.masks[from].at(at));
      any_mask = any_mask || ls.input_masks.back().defined();
    }
    // No input mask: an empty list, so a layer can test input_masks.empty() cheaply.
    if (!any_mask) ls.input_masks.clear();
    ls.saved.clear();
    ls.output_dtype = dtypes[i];
    // The plan gives a producer and its pooling one dtype; a cast between them (float16 can round
    // a small positive value to 0) would change the mask, so the move needs equal dtypes.
    // The pooling's side follows from its producer's: that node's single consumer is this one.
    ls.output_grad_past_relu = relu_backward_moved_[i] && dtypes[i] == dtypes[consumers_[i].front()];
    ls.output_relu_deferred = ls.output_grad_past_relu && relu_forward_moved_[i];
    const std::size_t producer = node.inputs.size() == 1 ? node_index(node.inputs.front().node().get()) : i;
    ls.input_grad_through_relu = producer != i && relu_backward_moved_[producer] && dtypes[producer] == dtypes[i];
    ls.input_relu_deferred = ls.input_grad_through_relu && relu_forward_moved_[producer];
    ls.input_grad_channel_sums = Tensor();
    ls.output_grad_channel_sums = Tensor();
    ins = inputs_as_taken(ctx, node, dtypes[i], std::move(ins));
    const ComputeDTypeScope compute(*ctx.backend, node.layer->compute_dtype());
    st.outputs[i] = node.layer->forward(ctx, ins, ls);
    st.masks[i] = node.layer->compute_output_masks(ctx, ins, st.outputs[i], ls);
    KERASCPP_CHECK_STATE(st.masks[i].size() == st.outputs[i].size(),
                         "Layer '{}' ({}): compute_output_masks gave {} masks for {} outputs", node.layer->name(),
                         node.layer->class_name(), st.masks[i].size(), st.outputs[i].size());
  }
  std::vector<Tensor> outs;
  for (auto& o : outputs_)
    outs.push_back(st.outputs[node_index(o.node().get())].at(static_cast<std::size_t>(o.index())));
  return outs;
}

std::vector<Tensor> Graph::output_masks(const GraphState& st) const {
  std::vector<Tensor> masks;
  for (auto& o : outputs_) {
    const auto& node_masks = st.masks.at(node_index(o.node().get()));
    masks.push_back(node_masks.empty() ? Tensor() : node_masks.at(static_cast<std::size_t>(o.index())));
  }
  return masks;
}

bool Graph::creates_masks() const {
  for (const auto& node : nodes_)
    if (node->layer && node->layer->creates_masks()) return true;
  return false;
}

void Graph::backward(ReplicaContext& ctx, const std::vector<Tensor>& output_grads, GraphState& st,
                     const std::function<void(Layer&)>& on_layer_done) const {
  std::size_t n = nodes_.size();
  std::vector<std::vector<Tensor>> grads(n);
  for (std::size_t i = 0; i < n; ++i) grads[i].resize(nodes_[i]->output_shapes.size());
  // `dtype`: the activation's (float32, or 16 bits between layers that keep them so).
  auto accumulate = [&](Tensor& slot, const Tensor& g, DType dtype) {
    if (!g.defined()) return;  // a layer told it needs no input gradient returned none
    if (!slot.defined()) {
      slot = in_dtype(*ctx.backend, g, dtype);
    } else {
      // A tensor consumed by several layers (a branch): sum the gradients in a fresh buffer so
      // no layer's output gradient is modified behind its back; 16-bit ones in float32.
      Tensor sum(slot.shape());
      ctx.backend->add({in_dtype(*ctx.backend, slot, DType::float32), in_dtype(*ctx.backend, g, DType::float32)}, sum);
      slot = in_dtype(*ctx.backend, sum, dtype);
    }
  };
  auto output_dtype = [&](const KerasTensor& kt) {
    return st.outputs[node_index(kt.node().get())].at(static_cast<std::size_t>(kt.index())).dtype();
  };
  for (std::size_t k = 0; k < outputs_.size(); ++k)
    accumulate(grads[node_index(outputs_[k].node().get())][static_cast<std::size_t>(outputs_[k].index())],
               output_grads[k], output_dtype(outputs_[k]));
  std::vector<int> remaining = calls_per_layer_;
  for (std::size_t i = n; i-- > 0;) {
    const Node& node = *nodes_[i];
    if (dynamic_cast<layers::InputLayerImpl*>(node.layer.get())) continue;
    std::vector<Tensor>& g = grads[i];
    st.layer_states[i].need_input_grads = need_input_grads_[i] != 0;
    // Nothing to compute: no trainable variable here (a frozen layer, say) and no input that
    // leads back to one.
    if (need_input_grads_[i] || node.layer->needs_gradient()) {
      // Zeros for an output no consumer sent a gradient to: unused downstream, or consumed by a
      // layer told it needs no input gradient (the Flatten before the first Dense of an MLP gets
      // none, and, having nothing to compute, no zeros either).
      for (std::size_t j = 0; j < g.size(); ++j)
        if (!g[j].defined())
          g[j] = Tensor::zeros(st.outputs[i][j].shape(),
                               is_float(st.outputs[i][j].dtype()) ? st.outputs[i][j].dtype() : DType::float32);
      const ComputeDTypeScope compute(*ctx.backend, node.layer->compute_dtype());
      LayerState& ls = st.layer_states[i];
      auto input_grads = node.layer->backward(ctx, st.inputs[i], st.outputs[i], g, ls);
      // The producer's bias gradient, where the pooling took it (LayerState::input_grad_channel_sums);
      // the producer feeds this node alone, so this is its whole output gradient's sums.
      if (ls.input_grad_through_relu && ls.input_grad_channel_sums.defined())
        st.layer_states[node_index(node.inputs.front().node().get())].output_grad_channel_sums =
            std::move(ls.input_grad_channel_sums);
      for (std::size_t j = 0; j < node.inputs.size(); ++j) {
        const KerasTensor& kt = node.inputs[j];
        accumulate(grads[node_index(kt.node().get())][static_cast<std::size_t>(kt.index())], input_grads.at(j),
                   output_dtype(kt));
      }
    }
    g.clear();
    int li = layer_of_node_[i];
    if (--remaining[static_cast<std::size_t>(li)] == 0 && on_layer_done)
      on_layer_done(*layers_[static_cast<std::size_t>(li)]);
  }
}

void Graph::forward_empty(ReplicaContext& ctx) const {
  for (auto& node : nodes_) node->layer->forward_empty(ctx);
}

void Graph::backward_empty(ReplicaContext& ctx, const std::function<void(Layer&)>& on_layer_done) const {
  std::vector<int> remaining = calls_per_layer_;
  for (std::size_t i = nodes_.size(); i-- > 0;) {
    nodes_[i]->layer->backward_empty(ctx);
    int li = layer_of_node_[i];
    if (--remaining[static_cast<std::size_t>(li)] == 0 && on_layer_done)
      on_layer_done(*layers_[static_cast<std::size_t>(li)]);
  }
}

}  // namespace kerascpp::detail
