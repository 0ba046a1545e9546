// LSTM, GRU and SimpleRNN (see kerascpp/layers/recurrent.hpp): Keras' rnn() loop over Backend ops.
//
// Forward keeps, in processing order s = 0..T-1 (step s reads input step t = s, or T-1-s with
// go_backwards), H [T+1, B, U] (H[0] = 0, H[s+1] the state after step s), LSTM's C likewise, the
// post-activation gates [T, B, G] (SimpleRNN: its output before masking) and, per cell, act(c)
// (LSTM) or the recurrent projection (GRU).
// Backward runs the steps in reverse (backprop through time) and then forms the weight gradients
// of all steps at once: dW = Xᵀ·dXW, dU = H[0..T-1]ᵀ·dREC, db = Σ dXW (and Σ dREC for GRU's
// recurrent bias).
#include "kerascpp/layers/recurrent.hpp"
#include "kerascpp/core/layer_config.hpp"

#include "check.hpp"
#include "kerascpp/core/random.hpp"
#include "layer_util.hpp"
#include "recurrent_cells.hpp"

namespace kerascpp::layers {

namespace {

// Row s of a [T, B, ...] tensor as a [B, ...] view (rank 2: [B, rest]).
Tensor step_view(const Tensor& t, std::int64_t s) {
  return t.slice(s, s + 1).reshape({t.dim(1), t.numel() / (t.dim(0) * t.dim(1))});
}

// Keras' np.where(mask, new, old) per example, as keep·new + drop·old with keep/drop the mask row
// as 1/0 floats (exact: one term is a zero). `out` may not alias new or old.
void select_rows(Backend& be, const Tensor& keep, const Tensor& drop, const Tensor& fresh, const Tensor& old,
                 Tensor& out) {
  Tensor a = fresh.clone(), b = old.clone();
  be.scale_rows(a, keep);
  be.scale_rows(b, drop);
  be.add({a, b}, out);
}

Tensor scaled_rows(Backend& be, const Tensor& x, const Tensor& w) {
  Tensor y = x.clone();
  be.scale_rows(y, w);
  return y;
}

// zero_output_for_mask on a [T, B, U] sequence in processing order: step s (input step t) times
// its keep row, in place.
void zero_masked_steps(Backend& be, Tensor& seq, const Tensor& keep, bool go_backwards) {
  const std::int64_t T = seq.dim(0), B = seq.dim(1);
  for (std::int64_t s = 0; s < T; ++s) {
    Tensor row = step_view(seq, s);
    be.scale_rows(row, step_view(keep, go_backwards ? T - 1 - s : s).reshape({B}));
  }
}

}  // namespace

RecurrentLayer::RecurrentLayer(Cell cell, std::int64_t units, RecurrentOptions options)
    : Layer(options.name), cell_(cell), units_(units), options_(std::move(options)) {
  if (cell_ == Cell::simple_rnn) options_.recurrent_activation = "sigmoid";  // unused: no gates
  KERASCPP_CHECK_VALUE(units_ > 0, "{}: units must be positive (the size of the state), got {}", where(), units_);
  activation_ = activation_from_name(options_.activation, where());
  recurrent_activation_ = activation_from_name(options_.recurrent_activation, where());
  // The cells keep post-activation gates and take each activation's backward from them, so an
  // activation must have a gradient that follows from its output (and work elementwise).
  for (const ActivationFn* a : {&activation_, &recurrent_activation_})
    KERASCPP_CHECK_VALUE(!a->along_axis() && a->gradient_from_output(),
                         "{}: {} is not supported as an RNN activation here (the recurrent cells take its "
                         "gradient from its output); use one of linear, relu, sigmoid, tanh, elu, selu, "
                         "celu, exponential, relu6, hard_tanh, hard_sigmoid, sparse_sigmoid, softplus, "
                         "log_sigmoid, softsign",
                         where(), activation_name(*a));
  set_input_spec({.ndim = 3,
                  .layout = "(batch, steps, features)",
                  .rank_hint = "an RNN reads sequences; add a steps axis, e.g. Reshape({steps, features})"});
}

std::string RecurrentLayer::class_name() const {
  switch (cell_) {
    case Cell::lstm:
      return "LSTM";
    case Cell::gru:
      return "GRU";
    case Cell::simple_rnn:
      return "SimpleRNN";
  }
  return "RNN";
}

std::vector<Shape> RecurrentLayer::compute_output_shapes(const std::vector<Shape>& in) {
  const Shape& s = in[0];  // (steps, features): the input spec holds
  std::vector<Shape> out{options_.return_sequences ? Shape{s[0], units_} : Shape{units_}};
  if (options_.return_state) out.insert(out.end(), state_count(), Shape{units_});
  return out;
}

void RecurrentLayer::build(const std::vector<Shape>& in) {
  const std::int64_t D = in[0][1], G = gates() * units_;
  const std::uint64_t seed = options_.seed ? *options_.seed : next_random_seed();
  kernel_ = &add_weight("kernel", {D, G}, options_.kernel_initializer, true, seed, options_.kernel_regularizer,
                        options_.kernel_constraint);
  recurrent_kernel_ = &add_weight("recurrent_kernel", {units_, G}, options_.recurrent_initializer, true, seed + 1,
                                  options_.recurrent_regularizer, options_.recurrent_constraint);
  if (options_.use_bias) {
    const Shape bias_shape = cell_ == Cell::gru ? Shape{2, G} : Shape{G};
    // Keras: concat(bias_initializer((U,)), ones((U,)), bias_initializer((2U,))): the forget gate starts at 1.
    const bool forget_ones = cell_ == Cell::lstm && options_.unit_forget_bias;
    bias_ = &add_weight(
        "bias", bias_shape,
        forget_ones ? options_.bias_initializer.with_ones_in(units_, 2 * units_) : options_.bias_initializer, true,
        seed + 2, options_.bias_regularizer, options_.bias_constraint);
  }
  set_input_spec({.ndim = 3, .axes = {{-1, D}}, .layout = "(batch, steps, features)"});
}

// saved: {H [T+1,B,U], C [T+1,B,U] (LSTM) or undefined, gates [T,B,G], aux (LSTM act(c) [T,B,U];
//         GRU recurrent projection [T,B,G]; SimpleRNN none), keep [T,B], drop [T,B] (undefined
//         without a mask)}
std::vector<Tensor> RecurrentLayer::forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) {
  Backend& be = *ctx.backend;
  const int r = ctx.replica_id;
  const Tensor& x = in[0];
  const std::int64_t B = x.dim(0), T = x.dim(1), D = x.dim(2), U = units_, G = gates() * U;
  const Device dev = x.device();
  const bool lstm = cell_ == Cell::lstm, gru = cell_ == Cell::gru;
  const Tensor& W = kernel_->value(r);
  const Tensor& Uk = recurrent_kernel_->value(r);
  Tensor b_in, b_rec;
  if (bias_) {
    const Tensor& b = bias_->value(r);
    b_in = gru ? b.slice(0, 1).reshape({G}) : b;
    if (gru) b_rec = b.slice(1, 2).reshape({G});
  }

  // The input projection of every step at once, then steps first: xw [T, B, G].
  Tensor xw_bt({B * T, G}, DType::float32, dev);
  be.dense_forward(x.reshape({B * T, D}), W, b_in, ActivationKind::linear, xw_bt);
  Tensor xw;
  be.transpose(xw_bt.reshape({B, T, G}), {1, 0, 2}, xw);

  Tensor keep, drop;
  const Tensor mask = st.input_masks.empty() ? Tensor() : st.input_masks[0];
  if (mask.defined()) {
    Tensor k = Tensor::full({B, T}, 1.f).to(dev), d = Tensor::zeros({B, T}, DType::float32, dev);
    be.masked_fill(k, mask, 0.f);
    be.masked_fill(d, mask, 1.f);
    be.transpose(k, {1, 0}, keep);
    be.transpose(d, {1, 0}, drop);
  }

  Tensor H = Tensor::zeros({T + 1, B, U}, DType::float32, dev);
  Tensor C = lstm ? Tensor::zeros({T + 1, B, U}, DType::float32, dev) : Tensor();
  Tensor gates_all({T, B, G}, DType::float32, dev);
  Tensor aux = lstm ? Tensor({T, B, U}, DType::float32, dev) : gru ? Tensor({T, B, G}, DType::float32, dev) : Tensor();
  for (std::int64_t s = 0; s < T; ++s) {
    const std::int64_t t = options_.go_backwards ? T - 1 - s : s;
    Tensor xw_t = step_view(xw, t), h_prev = step_view(H, s), h_out = step_view(H, s + 1);
    Tensor gates_s = step_view(gates_all, s), aux_s = aux.defined() ? step_view(aux, s) : Tensor();
    // Without a mask the cell writes the new states in place; with one, into temporaries first.
    Tensor h_new = mask.defined() ? Tensor({B, U}, DType::float32, dev) : h_out;
    if (lstm) {
      Tensor z = xw_t.clone();
      be.matmul(h_prev, false, Uk, false, z, true);
      Tensor c_prev = step_view(C, s), c_out = step_view(C, s + 1);
      Tensor c_new = mask.defined() ? Tensor({B, U}, DType::float32, dev) : c_out;
      cells::lstm_forward(be, activation_, recurrent_activation_, z, c_prev, gates_s, c_new, aux_s, h_new);
      if (mask.defined())
        select_rows(be, step_view(keep, t).reshape({B}), step_view(drop, t).reshape({B}), c_new, c_prev, c_out);
    } else if (gru) {
      be.dense_forward(h_prev, Uk, b_rec, ActivationKind::linear, aux_s);
      cells::gru_forward(be, activation_, recurrent_activation_, xw_t, aux_s, h_prev, gates_s, h_new);
    } else {  // SimpleRNN: the cell's output is kept as its only "gate", for the backward
      Tensor z = xw_t.clone();
      be.matmul(h_prev, false, Uk, false, z, true);
      cells::simple_rnn_forward(be, activation_, z, gates_s);
      if (mask.defined()) h_new = gates_s;
      else be.copy(gates_s, h_out);
    }
    if (mask.defined())
      select_rows(be, step_view(keep, t).reshape({B}), step_view(drop, t).reshape({B}), h_new, h_prev, h_out);
  }
  st.saved = {H, C, gates_all, aux, keep, drop};

  // Keras returns the outputs in processing order (reversed with go_backwards); the output at a
  // masked step is the carried state, so the outputs are H[1..T] (zeroed at masked steps with
  // zero_output_for_mask).
  const bool zero_masked = options_.zero_output_for_mask && mask.defined();
  std::vector<Tensor> outs;
  Tensor seq = H.slice(1, T + 1).clone();
  if (zero_masked) zero_masked_steps(be, seq, keep, options_.go_backwards);
  if (options_.return_sequences) {
    Tensor y;
    be.transpose(seq, {1, 0, 2}, y);
    outs.push_back(y);
  } else {
    outs.push_back(seq.slice(T - 1, T).reshape({B, U}).clone());
  }
  if (options_.return_state) {  // the carried states, never zeroed
    outs.push_back(H.slice(T, T + 1).reshape({B, U}).clone());
    if (lstm) outs.push_back(C.slice(T, T + 1).reshape({B, U}).clone());
  }
  return outs;
}

std::vector<Tensor> RecurrentLayer::backward(ReplicaContext& ctx, const std::vector<Tensor>& in,
                                             const std::vector<Tensor>&, const std::vector<Tensor>& grads,
                                             LayerState& st) {
  Backend& be = *ctx.backend;
  const int r = ctx.replica_id;
  const Tensor& x = in[0];
  const std::int64_t B = x.dim(0), T = x.dim(1), D = x.dim(2), U = units_, G = gates() * U;
  const Device dev = x.device();
  const bool lstm = cell_ == Cell::lstm, gru = cell_ == Cell::gru;
  const Tensor &H = st.saved[0], &C = st.saved[1], &gates_all = st.saved[2], &aux = st.saved[3];
  const Tensor &keep_all = st.saved[4], &drop = st.saved[5];
  const bool masked = keep_all.defined();
  const Tensor& Uk = recurrent_kernel_->value(r);

  const bool zero_masked = options_.zero_output_for_mask && masked;
  Tensor dseq;
  if (options_.return_sequences) {
    be.transpose(grads[0], {1, 0, 2}, dseq);  // [T, B, U], processing order
    if (zero_masked) zero_masked_steps(be, dseq, keep_all, options_.go_backwards);
  }
  Tensor dh = options_.return_sequences ? Tensor::zeros({B, U}, DType::float32, dev) : grads[0].clone();
  if (!options_.return_sequences && zero_masked)
    be.scale_rows(dh, step_view(keep_all, options_.go_backwards ? 0 : T - 1).reshape({B}));
  Tensor dc = lstm ? Tensor::zeros({B, U}, DType::float32, dev) : Tensor();
  if (options_.return_state) {  // the final states' own gradients join at the last step
    be.add_inplace(dh, grads[1]);
    if (lstm) be.add_inplace(dc, grads[2]);
  }
  Tensor dxw_all({T, B, G}, DType::float32, dev);   // input steps' order
  Tensor drec_all({T, B, G}, DType::float32, dev);  // processing order, like H
  for (std::int64_t s = T - 1; s >= 0; --s) {
    const std::int64_t t = options_.go_backwards ? T - 1 - s : s;
    if (dseq.defined()) be.add_inplace(dh, step_view(dseq, s));
    Tensor k, d;
    Tensor dh_new = dh, dc_new = dc;
    if (masked) {  // a masked step passed its states through: their gradients skip the cell
      k = step_view(keep_all, t).reshape({B});
      d = step_view(drop, t).reshape({B});
      dh_new = scaled_rows(be, dh, k);
      if (lstm) dc_new = scaled_rows(be, dc, k);
    }
    Tensor h_prev = step_view(H, s), drec = step_view(drec_all, s), dxw = step_view(dxw_all, t);
    Tensor dh_prev({B, U}, DType::float32, dev);
    if (lstm) {
      Tensor dc_prev({B, U}, DType::float32, dev);
      cells::lstm_backward(be, activation_, recurrent_activation_, step_view(gates_all, s), step_view(C, s),
                           step_view(aux, s), dh_new, dc_new, drec, dc_prev);
      be.copy(drec, dxw);  // z = xw + h·U: the same gradient for both
      be.matmul(drec, false, Uk, true, dh_prev, false);
      if (masked) be.add_inplace(dc_prev, scaled_rows(be, dc, d));
      dc = dc_prev;
    } else if (gru) {
      cells::gru_backward(be, activation_, recurrent_activation_, step_view(gates_all, s), step_view(aux, s), h_prev,
                          dh_new, dxw, drec, dh_prev);
      be.matmul(drec, false, Uk, true, dh_prev, true);
    } else {
      cells::simple_rnn_backward(be, activation_, step_view(gates_all, s), dh_new, drec);
      be.copy(drec, dxw);  // z = xw + h·U, as LSTM
      be.matmul(drec, false, Uk, true, dh_prev, false);
    }
    if (masked) be.add_inplace(dh_prev, scaled_rows(be, dh, d));
    dh = dh_prev;
  }

  // Weight gradients of all steps at once.
  Tensor x_tb;
  be.transpose(x, {1, 0, 2}, x_tb);
  x_tb = x_tb.reshape({T * B, D});
  Tensor dxw2 = dxw_all.reshape({T * B, G}), drec2 = drec_all.reshape({T * B, G});
  const bool first_k = kernel_->take_first_grad(r);
  be.matmul(x_tb, true, dxw2, false, kernel_->grad(r), !first_k);
  const bool first_u = recurrent_kernel_->take_first_grad(r);
  be.matmul(H.slice(0, T).reshape({T * B, U}), true, drec2, false, recurrent_kernel_->grad(r), !first_u);
  if (bias_) {
    const bool first_b = bias_->take_first_grad(r);
    Tensor& db = bias_->grad(r);
    if (!gru) {
      be.sum_to_last_axis(dxw2, db, !first_b);
    } else {
      Tensor db_in = db.slice(0, 1).reshape({G}), db_rec = db.slice(1, 2).reshape({G});
      be.sum_to_last_axis(dxw2, db_in, !first_b);
      be.sum_to_last_axis(drec2, db_rec, !first_b);
    }
  }
  if (!st.need_input_grads) return {Tensor()};
  Tensor dx_tb({T * B, D}, DType::float32, dev);
  be.matmul(dxw2, false, kernel_->value(r), true, dx_tb, false);
  Tensor dx;
  be.transpose(dx_tb.reshape({T, B, D}), {1, 0, 2}, dx);
  return {dx};
}

std::vector<Tensor> RecurrentLayer::compute_output_masks(ReplicaContext&, const std::vector<Tensor>&,
                                                         const std::vector<Tensor>&, const LayerState& st) {
  // Keras' RNN.compute_mask: the input mask with return_sequences (unreversed even with
  // go_backwards, as Keras), none for the last output and the states.
  std::vector<Tensor> masks(1 + (options_.return_state ? state_count() : 0));
  if (options_.return_sequences && !st.input_masks.empty()) masks[0] = st.input_masks[0];
  return masks;
}

std::vector<Layer::WeightGroup> RecurrentLayer::weight_groups() {
  // Keras keeps the variables in the layer's "cell" sublayer (LSTMCell / GRUCell).
  std::vector<Variable*> vars{kernel_, recurrent_kernel_};
  if (bias_) vars.push_back(bias_);
  return {{"", {}}, {"cell", vars}};
}

Json RecurrentLayer::get_config() const {
  detail::Json config = {{"name", name()},
                         {"units", units_},
                         {"activation", activation_config_name(activation_, name())},
                         {"use_bias", options_.use_bias},
                         {"return_sequences", options_.return_sequences},
                         {"return_state", options_.return_state},
                         {"go_backwards", options_.go_backwards},
                         {"stateful", false},
                         {"unroll", false},
                         {"zero_output_for_mask", options_.zero_output_for_mask},
                         {"dropout", 0.0},
                         {"recurrent_dropout", 0.0}};
  if (cell_ != Cell::simple_rnn) config["recurrent_activation"] = activation_name(recurrent_activation_);
  if (cell_ == Cell::lstm) config["unit_forget_bias"] = options_.unit_forget_bias;
  if (cell_ == Cell::gru) config["reset_after"] = true;
  if (options_.seed) config["seed"] = *options_.seed;
  detail::add_weight_options(config, "kernel", options_.kernel_regularizer, options_.kernel_constraint);
  detail::add_weight_options(config, "recurrent", options_.recurrent_regularizer, options_.recurrent_constraint);
  detail::add_weight_options(config, "bias", options_.bias_regularizer, options_.bias_constraint);
  return config;
}

LayerRef LSTM(std::int64_t units, RecurrentOptions options) {
  return std::make_shared<RecurrentLayer>(RecurrentLayer::Cell::lstm, units, std::move(options));
}
LayerRef GRU(std::int64_t units, RecurrentOptions options) {
  return std::make_shared<RecurrentLayer>(RecurrentLayer::Cell::gru, units, std::move(options));
}

// Keras 3's defaults for what kerascpp does not have (dropout, stateful).
RecurrentOptions recurrent_options_from_config(const LayerConfig& c) {
  c.expect("dropout", 0.0, "no dropout inside the recurrence yet");
  c.expect("recurrent_dropout", 0.0, "no recurrent dropout yet");
  c.expect("stateful", false, "no stateful layers");
  // The seed, so that a copy made from the config (Bidirectional's two directions) starts alike.
  const Json* seed = c.find("seed");
  return {
      .activation = c.str("activation", "tanh"),
      .recurrent_activation = c.str("recurrent_activation", "sigmoid"),
      .use_bias = c.get("use_bias", true),
      .unit_forget_bias = c.get("unit_forget_bias", true),
      .kernel_regularizer = c.regularizer("kernel_regularizer"),
      .recurrent_regularizer = c.regularizer("recurrent_regularizer"),
      .bias_regularizer = c.regularizer("bias_regularizer"),
      .kernel_constraint = c.constraint("kernel_constraint"),
      .recurrent_constraint = c.constraint("recurrent_constraint"),
      .bias_constraint = c.constraint("bias_constraint"),
      .return_sequences = c.get("return_sequences", false),
      .return_state = c.get("return_state", false),
      .go_backwards = c.get("go_backwards", false),
      .zero_output_for_mask = c.get("zero_output_for_mask", false),
      .seed = seed && !seed->is_null() ? std::optional<std::uint64_t>(c.get<std::uint64_t>("seed", 0)) : std::nullopt,
      .name = c.name()};
}

namespace {

LayerRef recurrent_from_config(const std::string& kind, const LayerConfig& c) {
  if (kind == "GRU") c.expect("reset_after", true, "Keras 3's GRU (reset gate after the matmul)");
  RecurrentOptions o = recurrent_options_from_config(c);
  const auto units = c.required<std::int64_t>("units");
  return kind == "LSTM" ? LSTM(units, o) : GRU(units, o);
}

}  // namespace

KERASCPP_REGISTER_LAYER("LSTM", [](const LayerConfig& c) { return recurrent_from_config("LSTM", c); });
KERASCPP_REGISTER_LAYER("GRU", [](const LayerConfig& c) { return recurrent_from_config("GRU", c); });

}  // namespace kerascpp::layers
