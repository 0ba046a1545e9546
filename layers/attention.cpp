// Attention (see kerascpp/layers/attention.hpp) as Backend ops: batched matmuls, the attention
// mask, softmax, dropout. The learned scalar `scale` multiplies the scores through scale_rows
// with a per-row copy of it made on the device (ones · scale, a matmul), so it is never read on
// the host; its gradient is Σ dscores ⊙ raw scores, also a matmul with ones.
#include "kerascpp/layers/attention.hpp"

#include "check.hpp"
#include "kerascpp/core/layer_config.hpp"
#include "kerascpp/core/random.hpp"
#include "layer_util.hpp"

namespace kerascpp::layers {

namespace {

// Keras' _apply_scores subtracts this from masked scores (float32).
constexpr float kAttentionMaskPenalty = -1.0e9f;

// A float32 [n] tensor of ones on dev.
Tensor ones_on(std::int64_t n, Device dev) { return Tensor::full({n, 1}, 1.f).to(dev); }

}  // namespace

AttentionLayer::AttentionLayer(AttentionOptions options)
    : Layer(options.name), options_(std::move(options)), seed_(options_.seed ? *options_.seed : next_random_seed()) {
  KERASCPP_CHECK_VALUE(options_.score_mode == "dot",
                       "{}: score_mode '{}' is not supported yet (kerascpp has 'dot'; Keras also has 'concat')",
                       where(), options_.score_mode);
  KERASCPP_CHECK_VALUE(options_.dropout >= 0.0 && options_.dropout < 1.0, "{}: dropout must be in [0, 1), got {}",
                       where(), options_.dropout);
  set_input_spec_for_each({.ndim = 3, .layout = "(batch, steps, features)"});
}

KerasTensor AttentionLayer::call(const std::vector<KerasTensor>& inputs, AttentionCall c) {
  KERASCPP_CHECK_VALUE(!built() || c.use_causal_mask == causal_,
                       "{}: every call of one layer must pass the same use_causal_mask as its first call; make "
                       "another Attention for this one",
                       where());
  causal_ = c.use_causal_mask;
  return (*this)(inputs);
}

std::vector<Shape> AttentionLayer::compute_output_shapes(const std::vector<Shape>& in) {
  KERASCPP_CHECK_VALUE(in.size() == 2 || in.size() == 3,
                       "{}: takes [query, value] or [query, value, key], got {} inputs", where(), in.size());
  const Shape& q = in[0];
  const Shape& v = in[1];
  const Shape& k = in.size() > 2 ? in[2] : v;
  KERASCPP_CHECK_VALUE(k[0] == v[0], "{}: key {} and value {} need the same number of steps", where(), shape_str(k),
                       shape_str(v));
  KERASCPP_CHECK_VALUE(q[1] == k[1],
                       "{}: 'dot' scores need query {} and key {} of the same last dimension (project one with "
                       "Dense first)",
                       where(), shape_str(q), shape_str(k));
  return {{q[0], v[1]}};
}

void AttentionLayer::build(const std::vector<Shape>&) {
  if (options_.use_scale) scale_ = &add_weight("scale", {}, "ones", true, seed_);
}

// saved: {raw scores [B,Tq,Tv] (use_scale), weights after softmax, weights used (after dropout),
//         dropout mask (dropout in training), query keep [B·Tq] (query mask), scale per row [B·Tq]}
std::vector<Tensor> AttentionLayer::forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) {
  Backend& be = *ctx.backend;
  const Tensor& q = in[0];
  const Tensor& v = in[1];
  const Tensor& k = in.size() > 2 ? in[2] : v;
  const std::int64_t B = q.dim(0), Tq = q.dim(1), Tv = v.dim(1);
  const Device dev = q.device();
  auto mask_of = [&](std::size_t i) { return i < st.input_masks.size() ? st.input_masks[i] : Tensor(); };

  Tensor scores({B, Tq, Tv}, DType::float32, dev), raw, scale_rows_vec;
  be.batched_matmul(q, false, k, true, scores, false);
  if (scale_) {
    raw = scores.clone();
    scale_rows_vec = Tensor({B * Tq, 1}, DType::float32, dev);
    be.matmul(ones_on(B * Tq, dev), false, scale_->value(ctx.replica_id).reshape({1, 1}), false, scale_rows_vec, false);
    scale_rows_vec = scale_rows_vec.reshape({B * Tq});
    be.scale_rows(scores, scale_rows_vec);
  }
  const Tensor value_mask = mask_of(1);
  if (value_mask.defined() || causal_) {
    Tensor keep({B, Tq, Tv}, DType::uint8, dev);
    be.attention_mask(Tensor(), value_mask, Tensor(), causal_, keep);
    Tensor penalty = Tensor::zeros({B * Tq, 1, Tv}, DType::float32, dev);
    be.masked_fill(penalty, keep.reshape({B * Tq, Tv}), kAttentionMaskPenalty);
    be.add_inplace(scores, penalty.reshape({B, Tq, Tv}));
  }
  Tensor weights({B, Tq, Tv}, DType::float32, dev);
  be.softmax_axis_forward(scores, -1, weights);
  Tensor used = weights, drop_mask;
  if (ctx.training && options_.dropout > 0.0) {
    used = Tensor({B, Tq, Tv}, DType::float32, dev);
    drop_mask = Tensor({B, Tq, Tv}, DType::float32, dev);
    be.dropout_forward(weights, static_cast<float>(options_.dropout), seed_ ^ ctx.rng.next_u64(), used, drop_mask);
  }
  Tensor out({B, Tq, v.dim(2)}, DType::float32, dev);
  be.batched_matmul(used, false, v, false, out, false);
  Tensor query_keep;
  if (const Tensor query_mask = mask_of(0); query_mask.defined()) {  // Keras: where(q_mask, out, 0)
    query_keep = Tensor::full({B, Tq}, 1.f).to(dev);
    be.masked_fill(query_keep, query_mask, 0.f);
    query_keep = query_keep.reshape({B * Tq});
    be.scale_rows(out, query_keep);
  }
  st.saved = {raw, weights, used, drop_mask, query_keep, scale_rows_vec};
  return {out};
}

std::vector<Tensor> AttentionLayer::backward(ReplicaContext& ctx, const std::vector<Tensor>& in,
                                             const std::vector<Tensor>&, const std::vector<Tensor>& grads,
                                             LayerState& st) {
  Backend& be = *ctx.backend;
  const Tensor& q = in[0];
  const Tensor& v = in[1];
  const bool has_key = in.size() > 2;
  const Tensor& k = has_key ? in[2] : v;
  const Tensor &raw = st.saved[0], &weights = st.saved[1], &used = st.saved[2], &drop_mask = st.saved[3];
  const Tensor &query_keep = st.saved[4], &scale_rows_vec = st.saved[5];
  const std::int64_t B = q.dim(0), Tq = q.dim(1), Tv = v.dim(1);
  const Device dev = q.device();

  Tensor dout = grads[0].clone();
  if (query_keep.defined()) be.scale_rows(dout, query_keep);
  Tensor dused({B, Tq, Tv}, DType::float32, dev), dv(v.shape(), DType::float32, dev);
  be.batched_matmul(dout, false, v, true, dused, false);
  be.batched_matmul(used, true, dout, false, dv, false);
  Tensor dweights = dused;
  if (drop_mask.defined()) {
    dweights = Tensor({B, Tq, Tv}, DType::float32, dev);
    be.multiply(dused, drop_mask, dweights);
  }
  Tensor dscores({B, Tq, Tv}, DType::float32, dev);
  be.softmax_axis_backward(weights, dweights, -1, dscores);
  if (scale_) {
    // d scale = Σ dscores ⊙ raw scores; the raw scores' gradient is dscores · scale.
    Tensor prod({B, Tq, Tv}, DType::float32, dev);
    be.multiply(dscores, raw, prod);
    const int r = ctx.replica_id;
    const bool first = scale_->take_first_grad(r);
    Tensor g = scale_->grad(r).reshape({1, 1});
    be.matmul(prod.reshape({1, B * Tq * Tv}), false, ones_on(B * Tq * Tv, dev), false, g, !first);
    be.scale_rows(dscores, scale_rows_vec);
  }
  if (!st.need_input_grads) return std::vector<Tensor>(in.size());
  Tensor dq(q.shape(), DType::float32, dev), dk(k.shape(), DType::float32, dev);
  be.batched_matmul(dscores, false, k, false, dq, false);
  be.batched_matmul(dscores, true, q, false, dk, false);
  if (has_key) return {dq, dv, dk};
  be.add_inplace(dv, dk);  // the value was the key too
  return {dq, dv};
}

std::vector<Tensor> AttentionLayer::compute_output_masks(ReplicaContext&, const std::vector<Tensor>&,
                                                         const std::vector<Tensor>&, const LayerState& st) {
  // Keras' Attention.compute_mask: the query's mask.
  return {st.input_masks.empty() ? Tensor() : st.input_masks[0]};
}

Layer::CallArguments AttentionLayer::call_arguments(std::size_t num_inputs) const {
  CallArguments call{std::vector<std::string>(num_inputs), true, "{}"};
  if (causal_) call.extra_kwargs_json = R"({"use_causal_mask": true})";
  return call;
}

Json AttentionLayer::get_config() const {
  Json config = {{"name", name()},
                 {"use_scale", options_.use_scale},
                 {"score_mode", options_.score_mode},
                 {"dropout", options_.dropout}};
  if (options_.seed) config["seed"] = *options_.seed;
  return config;
}

LayerRef Attention(AttentionOptions options) { return std::make_shared<AttentionLayer>(std::move(options)); }

KERASCPP_REGISTER_LAYER("Attention", [](const LayerConfig& c) {
  AttentionOptions o{.use_scale = c.get("use_scale", false),
                     .score_mode = c.str("score_mode", "dot"),
                     .dropout = c.get("dropout", 0.0),
                     .name = c.name()};
  if (c.find("seed")) o.seed = c.get<std::uint64_t>("seed", 0);
  return Attention(o);
});

}  // namespace kerascpp::layers
