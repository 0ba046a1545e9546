// TimeDistributed (see kerascpp/layers/time_distributed.hpp): the steps folded into the batch,
// (B, T, ...) -> (B·T, ...), one call of the wrapped layer, and the output unfolded. The wrapped
// layer's LayerState::saved is kept as the wrapper's.
#include "kerascpp/layers/time_distributed.hpp"

#include "core/layer_registry.hpp"
#include "core/sublayers.hpp"
#include "layer_util.hpp"

namespace kerascpp::layers {

namespace {

// (B, T, rest...) -> (B·T, rest...), and back.
Tensor fold_steps(const Tensor& x) {
  Shape s(x.shape().begin() + 1, x.shape().end());
  s[0] = x.dim(0) * x.dim(1);
  return x.reshape(s);
}
Tensor unfold_steps(const Tensor& y, std::int64_t batch) {
  Shape s{batch, y.dim(0) / batch};
  s.insert(s.end(), y.shape().begin() + 1, y.shape().end());
  return y.reshape(s);
}

}  // namespace

TimeDistributedLayer::TimeDistributedLayer(LayerRef layer, std::string name)
    : Layer(std::move(name)), layer_(std::move(layer)) {
  KERASCPP_CHECK_VALUE(layer_.get() != nullptr, "{}: the wrapped layer is null", where());
  set_input_spec({.min_ndim = 3,
                  .layout = "(batch, steps, ...)",
                  .rank_hint = "TimeDistributed applies its layer to each step: the input needs a steps axis after "
                               "the batch axis"});
}

std::vector<Shape> TimeDistributedLayer::compute_output_shapes(const std::vector<Shape>& in) {
  std::vector<Shape> inner = layer_->compute_output_shapes({Shape(in[0].begin() + 1, in[0].end())});
  KERASCPP_CHECK_VALUE(inner.size() == 1,
                       "{}: the wrapped layer {} '{}' gives {} outputs; TimeDistributed takes a "
                       "layer with one",
                       where(), layer_->class_name(), layer_->name(), inner.size());
  Shape out{in[0][0]};
  out.insert(out.end(), inner[0].begin(), inner[0].end());
  return {out};
}

void TimeDistributedLayer::build(const std::vector<Shape>& in) {
  // Built here, not called: the wrapped layer is not a node of the model's graph.
  layer_->build({Shape(in[0].begin() + 1, in[0].end())});
  detail::track_sublayer(shared_from_this(), layer_.get());
}

std::vector<Tensor> TimeDistributedLayer::forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) {
  LayerState inner;
  inner.need_input_grads = st.need_input_grads;
  std::vector<Tensor> y = layer_->forward(ctx, {fold_steps(in[0])}, inner);
  st.saved = std::move(inner.saved);
  return {unfold_steps(y[0], in[0].dim(0))};
}

std::vector<Tensor> TimeDistributedLayer::backward(ReplicaContext& ctx, const std::vector<Tensor>& in,
                                                   const std::vector<Tensor>& out, const std::vector<Tensor>& grads,
                                                   LayerState& st) {
  LayerState inner;
  inner.saved = st.saved;
  inner.need_input_grads = st.need_input_grads;
  std::vector<Tensor> dx =
      layer_->backward(ctx, {fold_steps(in[0])}, {fold_steps(out[0])}, {fold_steps(grads[0])}, inner);
  if (!st.need_input_grads || !dx[0].defined()) return {Tensor()};
  return {unfold_steps(dx[0], in[0].dim(0))};
}

std::vector<Layer::WeightGroup> TimeDistributedLayer::weight_groups() {
  // Keras: layers/time_distributed/layer/vars.
  std::vector<WeightGroup> groups{{"", {}}};
  for (auto& [sub, vars] : layer_->weight_groups()) groups.push_back({sub.empty() ? "layer" : "layer/" + sub, vars});
  return groups;
}

Json TimeDistributedLayer::get_config() const { return {{"name", name()}, {"layer", detail::layer_entry(*layer_)}}; }

LayerRef TimeDistributed(LayerRef layer, std::string name) {
  return std::make_shared<TimeDistributedLayer>(std::move(layer), std::move(name));
}

KERASCPP_REGISTER_LAYER("TimeDistributed", [](const LayerConfig& c) {
  return TimeDistributed(detail::layer_from_entry(c, "layer"), c.name());
});

}  // namespace kerascpp::layers
