// Attention and AdditiveAttention (see kerascpp/layers/attention.hpp) as Backend ops: batched
// matmuls, the attention mask, softmax, dropout; the two differ only in how scores are made.
// Attention's learned scalar `scale` multiplies the scores through scale_rows with a per-row copy
// of it made on the device (ones · scale, a matmul), so it is never read on the host; its gradient
// is Σ dscores ⊙ raw scores, also a matmul with ones. AdditiveAttention broadcasts query and key
// to [B, Tq, Tv, D] with concat (there is no broadcasting add) and contracts D with a matmul.
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

// saved: {weights after softmax, weights used (after dropout), dropout mask (dropout in training),
//         query keep [B·Tq] (query mask), then what scores_forward kept}
std::vector<Tensor> AttentionLayer::forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) {
  Backend& be = *ctx.backend;
  const Tensor& q = in[0];
  const Tensor& v = in[1];
  const Tensor& k = in.size() > 2 ? in[2] : v;
  const std::int64_t B = q.dim(0), Tq = q.dim(1), Tv = v.dim(1);
  const Device dev = q.device();
  auto mask_of = [&](std::size_t i) { return i < st.input_masks.size() ? st.input_masks[i] : Tensor(); };

  Tensor scores({B, Tq, Tv}, DType::float32, dev);
  std::vector<Tensor> kept;
  scores_forward(ctx, q, k, scores, kept);
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
  st.saved = {weights, used, drop_mask, query_keep};
  st.saved.insert(st.saved.end(), kept.begin(), kept.end());
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
  const Tensor &weights = st.saved[0], &used = st.saved[1], &drop_mask = st.saved[2], &query_keep = st.saved[3];
  const std::vector<Tensor> kept(st.saved.begin() + 4, st.saved.end());
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
  Tensor dq(q.shape(), DType::float32, dev), dk(k.shape(), DType::float32, dev);
  scores_backward(ctx, q, k, dscores, kept, dq, dk);  // also the scale's gradient
  if (!st.need_input_grads) return std::vector<Tensor>(in.size());
  if (has_key) return {dq, dv, dk};
  be.add_inplace(dv, dk);  // the value was the key too
  return {dq, dv};
}

// Dot scores: q·kᵀ, times the scalar scale. kept: {raw scores, scale per row [B·Tq]} with use_scale.
void AttentionLayer::scores_forward(ReplicaContext& ctx, const Tensor& q, const Tensor& k, Tensor& scores,
                                    std::vector<Tensor>& kept) {
  Backend& be = *ctx.backend;
  be.batched_matmul(q, false, k, true, scores, false);
  if (!scale_) return;
  const std::int64_t rows = q.dim(0) * q.dim(1);
  Tensor raw = scores.clone(), per_row({rows, 1}, DType::float32, q.device());
  be.matmul(ones_on(rows, q.device()), false, scale_->value(ctx.replica_id).reshape({1, 1}), false, per_row, false);
  per_row = per_row.reshape({rows});
  be.scale_rows(scores, per_row);
  kept = {raw, per_row};
}

void AttentionLayer::scores_backward(ReplicaContext& ctx, const Tensor& q, const Tensor& k, const Tensor& dscores,
                                     const std::vector<Tensor>& kept, Tensor& dq, Tensor& dk) {
  Backend& be = *ctx.backend;
  Tensor draw = dscores;
  if (scale_) {
    // d scale = Σ dscores ⊙ raw scores; the raw scores' gradient is dscores · scale.
    const std::int64_t n = dscores.numel();
    Tensor prod(dscores.shape(), DType::float32, dscores.device());
    be.multiply(dscores, kept[0], prod);
    const int r = ctx.replica_id;
    const bool first = scale_->take_first_grad(r);
    Tensor g = scale_->grad(r).reshape({1, 1});
    be.matmul(prod.reshape({1, n}), false, ones_on(n, dscores.device()), false, g, !first);
    draw = dscores.clone();
    be.scale_rows(draw, kept[1]);
  }
  be.batched_matmul(draw, false, k, false, dq, false);
  be.batched_matmul(draw, true, q, false, dk, false);
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

AdditiveAttentionLayer::AdditiveAttentionLayer(AttentionOptions options) : AttentionLayer(std::move(options)) {}

void AdditiveAttentionLayer::build(const std::vector<Shape>& in) {
  if (options_.use_scale) scale_ = &add_weight("scale", {in[0].back()}, "glorot_uniform", true, seed_);
}

// scores[b, t, s] = Σ_d w_d·tanh(q[b, t, d] + k[b, s, d]) with w the scale (ones without
// use_scale). kept: {tanh(q + k) [B·Tq·Tv, D], w [D, 1]}.
void AdditiveAttentionLayer::scores_forward(ReplicaContext& ctx, const Tensor& q, const Tensor& k, Tensor& scores,
                                            std::vector<Tensor>& kept) {
  Backend& be = *ctx.backend;
  const std::int64_t B = q.dim(0), Tq = q.dim(1), Tv = k.dim(1), D = q.dim(2);
  const Device dev = q.device();
  Tensor qe({B, Tq, Tv, D}, DType::float32, dev), ke({B, Tq, Tv, D}, DType::float32, dev),
      sum({B, Tq, Tv, D}, DType::float32, dev), h({B * Tq * Tv, D}, DType::float32, dev);
  be.concat(std::vector<Tensor>(static_cast<std::size_t>(Tv), q.reshape({B, Tq, 1, D})), 2, qe);
  be.concat(std::vector<Tensor>(static_cast<std::size_t>(Tq), k.reshape({B, 1, Tv, D})), 1, ke);
  be.add({qe, ke}, sum);
  be.activation_forward(ActivationKind::tanh, sum.reshape({B * Tq * Tv, D}), h);
  const Tensor w = scale_ ? scale_->value(ctx.replica_id).reshape({D, 1}) : Tensor::full({D, 1}, 1.f).to(dev);
  Tensor flat = scores.reshape({B * Tq * Tv, 1});
  be.matmul(h, false, w, false, flat, false);
  kept = {h, w};
}

void AdditiveAttentionLayer::scores_backward(ReplicaContext& ctx, const Tensor& q, const Tensor& k,
                                             const Tensor& dscores, const std::vector<Tensor>& kept, Tensor& dq,
                                             Tensor& dk) {
  Backend& be = *ctx.backend;
  const std::int64_t B = q.dim(0), Tq = q.dim(1), Tv = k.dim(1), D = q.dim(2), N = B * Tq * Tv;
  const Device dev = q.device();
  const Tensor &h = kept[0], &w = kept[1];
  const Tensor ds = dscores.reshape({N, 1});
  if (scale_) {
    const int r = ctx.replica_id;
    const bool first = scale_->take_first_grad(r);
    Tensor g = scale_->grad(r).reshape({D, 1});
    be.matmul(h, true, ds, false, g, !first);
  }
  Tensor dsum({N, D}, DType::float32, dev);
  be.matmul(ds, false, w, true, dsum, false);
  be.activation_backward(ActivationKind::tanh, h, dsum, dsum);
  // The broadcasts' backward: dq sums over the Tv copies, dk over the Tq copies.
  std::vector<Tensor> per_value(static_cast<std::size_t>(Tv)), per_query(static_cast<std::size_t>(Tq));
  for (auto& t : per_value) t = Tensor({B, Tq, 1, D}, DType::float32, dev);
  for (auto& t : per_query) t = Tensor({B, 1, Tv, D}, DType::float32, dev);
  be.split(dsum.reshape({B, Tq, Tv, D}), 2, per_value);
  be.split(dsum.reshape({B, Tq, Tv, D}), 1, per_query);
  Tensor dq4 = dq.reshape({B, Tq, 1, D}), dk4 = dk.reshape({B, 1, Tv, D});
  be.add(per_value, dq4);
  be.add(per_query, dk4);
}

Json AdditiveAttentionLayer::get_config() const {
  Json config = AttentionLayer::get_config();
  config.erase("score_mode");  // Keras' AdditiveAttention has none
  return config;
}

LayerRef AdditiveAttention(AttentionOptions options) {
  return std::make_shared<AdditiveAttentionLayer>(std::move(options));
}

KERASCPP_REGISTER_LAYER("Attention", [](const LayerConfig& c) {
  AttentionOptions o{.use_scale = c.get("use_scale", false),
                     .score_mode = c.str("score_mode", "dot"),
                     .dropout = c.get("dropout", 0.0),
                     .name = c.name()};
  if (c.find("seed")) o.seed = c.get<std::uint64_t>("seed", 0);
  return Attention(o);
});

KERASCPP_REGISTER_LAYER("AdditiveAttention", [](const LayerConfig& c) {
  AttentionOptions o{.use_scale = c.get("use_scale", true), .dropout = c.get("dropout", 0.0), .name = c.name()};
  if (c.find("seed")) o.seed = c.get<std::uint64_t>("seed", 0);
  return AdditiveAttention(o);
});

}  // namespace kerascpp::layers
