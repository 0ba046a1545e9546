// Bidirectional (see kerascpp/layers/bidirectional.hpp): two RecurrentLayers on the same input,
// their outputs merged with Backend ops (concat, add, multiply, scale).
//
// Each direction keeps its own LayerState; the wrapper's LayerState::saved holds {forward output,
// backward output in input order} followed by the forward layer's saved tensors and then the
// backward layer's (every RecurrentLayer saves the same number, so the two halves split evenly).
#include "kerascpp/layers/bidirectional.hpp"

#include "core/layer_registry.hpp"
#include "core/sublayers.hpp"
#include "kerascpp/layers/recurrent.hpp"
#include "layer_util.hpp"

namespace kerascpp::layers {

namespace {

const RecurrentLayer& as_rnn(const LayerRef& layer, const std::string& where, const char* role) {
  KERASCPP_CHECK_VALUE(layer.get() != nullptr, "{}: the {} is null", where, role);
  const auto* rnn = dynamic_cast<const RecurrentLayer*>(layer.get().get());
  KERASCPP_CHECK_VALUE(rnn != nullptr, "{}: the {} must be an RNN layer (LSTM, GRU or SimpleRNN), got {} '{}'", where,
                       role, layer->class_name(), layer->name());
  return *rnn;
}

std::string without_prefix(const std::string& name, const std::string& prefix) {
  return name.rfind(prefix, 0) == 0 ? name.substr(prefix.size()) : name;
}

// A fresh copy of an RNN layer from its config, as Keras' Bidirectional makes its two layers
// (serialize, edit, deserialize): a new name, and zero_output_for_mask = return_sequences.
LayerRef remade_rnn_layer(const LayerRef& layer, const std::string& name, std::optional<bool> go_backwards) {
  Json config = layer->get_config();
  config["name"] = name;
  config["zero_output_for_mask"] = config.value("return_sequences", false);
  if (go_backwards) config["go_backwards"] = *go_backwards;
  return detail::layer_from_config(layer->class_name(), config);
}

// y [B, T, ...] with its steps in reverse order (Keras' ops.flip(y, axis=1)).
Tensor reverse_steps(Backend& be, const Tensor& y) {
  const std::int64_t T = y.dim(1);
  Tensor steps_first, reversed(Shape{T, y.dim(0), y.numel() / (y.dim(0) * T)}, y.dtype(), y.device()), out;
  be.transpose(y.reshape({y.dim(0), T, y.numel() / (y.dim(0) * T)}), {1, 0, 2}, steps_first);
  for (std::int64_t s = 0; s < T; ++s) {
    Tensor row = reversed.slice(s, s + 1);
    be.copy(steps_first.slice(T - 1 - s, T - s), row);
  }
  be.transpose(reversed, {1, 0, 2}, out);
  return out.reshape(y.shape());
}

}  // namespace

BidirectionalLayer::BidirectionalLayer(const LayerRef& layer, BidirectionalOptions options)
    : Layer(options.name), merge_mode_(std::move(options.merge_mode)) {
  const RecurrentLayer& rnn = as_rnn(layer, where(), "wrapped layer");
  KERASCPP_CHECK_VALUE(!merge_mode_ || *merge_mode_ == "concat" || *merge_mode_ == "sum" || *merge_mode_ == "mul" ||
                           *merge_mode_ == "ave",
                       "{}: merge_mode '{}' is not one of concat, sum, mul, ave or None (std::nullopt)", where(),
                       merge_mode_.value_or(""));
  forward_ = remade_rnn_layer(layer, "forward_" + without_prefix(layer->name(), "forward_"), std::nullopt);
  if (options.backward_layer.get()) {
    (void)as_rnn(options.backward_layer, where(), "backward_layer");
    backward_ = remade_rnn_layer(options.backward_layer, options.backward_layer->name(), std::nullopt);
  } else {
    backward_ = remade_rnn_layer(layer, "backward_" + without_prefix(layer->name(), "backward_"), true);
  }
  const RecurrentLayer& bwd = as_rnn(backward_, where(), "backward_layer");
  return_sequences_ = rnn.options().return_sequences;
  return_state_ = rnn.options().return_state;
  KERASCPP_CHECK_VALUE(bwd.options().go_backwards != rnn.options().go_backwards,
                       "{}: the forward and backward layers must read in opposite directions (go_backwards: "
                       "forward {}, backward {}); give the backward_layer go_backwards = {}",
                       where(), rnn.options().go_backwards, bwd.options().go_backwards, !rnn.options().go_backwards);
  KERASCPP_CHECK_VALUE(
      bwd.options().return_sequences == return_sequences_ && bwd.options().return_state == return_state_,
      "{}: the forward and backward layers must agree on return_sequences and return_state "
      "(forward: {}, {}; backward: {}, {})",
      where(), return_sequences_, return_state_, bwd.options().return_sequences, bwd.options().return_state);
  KERASCPP_CHECK_VALUE(!merge_mode_ || *merge_mode_ == "concat" || rnn.units() == bwd.units(),
                       "{}: merge_mode '{}' adds or multiplies the two directions elementwise, so both need the "
                       "same units (forward {}, backward {}); use merge_mode concat",
                       where(), merge_mode_.value_or(""), rnn.units(), bwd.units());
  set_input_spec({.ndim = 3,
                  .layout = "(batch, steps, features)",
                  .rank_hint = "an RNN reads sequences; add a steps axis, e.g. Reshape({steps, features})"});
}

std::size_t BidirectionalLayer::state_count() const {
  return return_state_ ? (forward_->class_name() == "LSTM" ? 2 : 1) : 0;
}

std::vector<Shape> BidirectionalLayer::compute_output_shapes(const std::vector<Shape>& in) {
  std::vector<Shape> f = forward_->compute_output_shapes(in), b = backward_->compute_output_shapes(in);
  std::vector<Shape> out;
  if (!merge_mode_) {
    out = {f[0], b[0]};
  } else if (*merge_mode_ == "concat") {
    Shape s = f[0];
    s.back() += b[0].back();
    out = {s};
  } else {
    out = {f[0]};
  }
  out.insert(out.end(), f.begin() + 1, f.end());
  out.insert(out.end(), b.begin() + 1, b.end());
  return out;
}

void BidirectionalLayer::build(const std::vector<Shape>& in) {
  // The two layers are built here, not called: they are not nodes of the model's graph.
  forward_->build(in);
  backward_->build(in);
  detail::track_sublayer(shared_from_this(), forward_.get());
  detail::track_sublayer(shared_from_this(), backward_.get());
}

std::vector<Tensor> BidirectionalLayer::forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) {
  Backend& be = *ctx.backend;
  LayerState fs, bs;
  fs.input_masks = bs.input_masks = st.input_masks;
  fs.need_input_grads = bs.need_input_grads = st.need_input_grads;
  std::vector<Tensor> y = forward_->forward(ctx, in, fs), yr = backward_->forward(ctx, in, bs);
  if (return_sequences_) yr[0] = reverse_steps(be, yr[0]);
  st.saved = {y[0], yr[0]};
  st.saved.insert(st.saved.end(), fs.saved.begin(), fs.saved.end());
  st.saved.insert(st.saved.end(), bs.saved.begin(), bs.saved.end());

  std::vector<Tensor> out;
  if (!merge_mode_) {
    out = {y[0], yr[0]};
  } else {
    Shape merged = y[0].shape();
    if (*merge_mode_ == "concat") merged.back() += yr[0].shape().back();
    Tensor m(merged, DType::float32, y[0].device());
    if (*merge_mode_ == "concat") {
      be.concat({y[0], yr[0]}, -1, m);
    } else if (*merge_mode_ == "mul") {
      be.multiply(y[0], yr[0], m);
    } else {
      be.add({y[0], yr[0]}, m);
      if (*merge_mode_ == "ave") be.scale(m, 0.5f);
    }
    out = {m};
  }
  out.insert(out.end(), y.begin() + 1, y.end());
  out.insert(out.end(), yr.begin() + 1, yr.end());
  return out;
}

std::vector<Tensor> BidirectionalLayer::backward(ReplicaContext& ctx, const std::vector<Tensor>& in,
                                                 const std::vector<Tensor>&, const std::vector<Tensor>& grads,
                                                 LayerState& st) {
  Backend& be = *ctx.backend;
  const Tensor &y = st.saved[0], &yr = st.saved[1];
  const Tensor& g = grads[0];
  Tensor dy, dyr;
  std::size_t next = 1;  // the first state's gradient
  if (!merge_mode_) {
    dy = g;
    dyr = grads[1];
    next = 2;
  } else if (*merge_mode_ == "concat") {
    std::vector<Tensor> parts{Tensor(y.shape(), DType::float32, g.device()),
                              Tensor(yr.shape(), DType::float32, g.device())};
    be.split(g, -1, parts);
    dy = parts[0];
    dyr = parts[1];
  } else if (*merge_mode_ == "mul") {
    dy = Tensor(g.shape(), DType::float32, g.device());
    dyr = Tensor(g.shape(), DType::float32, g.device());
    be.multiply(g, yr, dy);
    be.multiply(g, y, dyr);
  } else {
    dy = g.clone();
    if (*merge_mode_ == "ave") be.scale(dy, 0.5f);
    dyr = dy;
  }
  if (return_sequences_) dyr = reverse_steps(be, dyr);
  const std::size_t k = state_count();
  std::vector<Tensor> fg{dy}, bg{dyr};
  for (std::size_t i = 0; i < k; ++i) {
    fg.push_back(grads[next + i]);
    bg.push_back(grads[next + k + i]);
  }
  LayerState fs, bs;
  const std::size_t half = (st.saved.size() - 2) / 2;
  fs.saved.assign(st.saved.begin() + 2, st.saved.begin() + 2 + static_cast<std::ptrdiff_t>(half));
  bs.saved.assign(st.saved.begin() + 2 + static_cast<std::ptrdiff_t>(half), st.saved.end());
  fs.input_masks = bs.input_masks = st.input_masks;
  fs.need_input_grads = bs.need_input_grads = st.need_input_grads;
  std::vector<Tensor> dx = forward_->backward(ctx, in, {}, fg, fs);
  std::vector<Tensor> dxr = backward_->backward(ctx, in, {}, bg, bs);
  if (!st.need_input_grads) return {Tensor()};
  be.add_inplace(dx[0], dxr[0]);
  return dx;
}

std::vector<Tensor> BidirectionalLayer::compute_output_masks(ReplicaContext&, const std::vector<Tensor>&,
                                                             const std::vector<Tensor>&, const LayerState& st) {
  // Keras' Bidirectional.compute_mask: the input mask on each returned sequence, none otherwise.
  const std::size_t outputs = (merge_mode_ ? 1 : 2) + 2 * state_count();
  std::vector<Tensor> masks(outputs);
  if (return_sequences_ && !st.input_masks.empty())
    for (std::size_t i = 0; i < (merge_mode_ ? 1u : 2u); ++i) masks[i] = st.input_masks[0];
  return masks;
}

std::vector<Layer::WeightGroup> BidirectionalLayer::weight_groups() {
  // Keras: layers/bidirectional/forward_layer/cell/vars, .../backward_layer/cell/vars.
  std::vector<WeightGroup> groups{{"", {}}};
  for (const auto& [prefix, layer] : {std::pair{"forward_layer", &forward_}, std::pair{"backward_layer", &backward_}})
    for (auto& [sub, vars] : (*layer)->weight_groups())
      groups.push_back({sub.empty() ? std::string(prefix) : std::string(prefix) + "/" + sub, vars});
  return groups;
}

Json BidirectionalLayer::get_config() const {
  return {{"name", name()},
          {"merge_mode", merge_mode_ ? Json(*merge_mode_) : Json()},
          {"layer", detail::layer_entry(*forward_)},
          {"backward_layer", detail::layer_entry(*backward_)}};
}

LayerRef Bidirectional(const LayerRef& layer, BidirectionalOptions options) {
  return std::make_shared<BidirectionalLayer>(layer, std::move(options));
}

KERASCPP_REGISTER_LAYER("Bidirectional", [](const LayerConfig& c) {
  const LayerRef layer = detail::layer_from_entry(c, "layer");
  const Json* backward = c.find("backward_layer");
  // merge_mode null is Keras' None (both outputs); absent, Keras' default "concat".
  const bool none = c.json().contains("merge_mode") && c.json()["merge_mode"].is_null();
  return Bidirectional(
      layer,
      {.merge_mode = none ? std::nullopt : std::optional<std::string>(c.str("merge_mode", "concat")),
       .backward_layer = backward && !backward->is_null() ? detail::layer_from_entry(c, "backward_layer") : LayerRef(),
       .name = c.name()});
});

}  // namespace kerascpp::layers
