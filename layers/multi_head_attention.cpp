#include "kerascpp/layers/multi_head_attention.hpp"
#include "kerascpp/core/layer_config.hpp"

#include <cmath>

#include "check.hpp"
#include "kerascpp/core/random.hpp"
#include "layer_util.hpp"

namespace kerascpp::layers {

namespace {

// Keras' dot_product_attention fills masked logits with -0.7 · float32 max (finite, so a fully
// masked row becomes a uniform softmax rather than NaN); its masked Softmax (used with dropout)
// uses -1e9 and zeroes the masked probabilities afterwards.
constexpr float kLargeNegative = -0.7f * 3.38953e38f;
constexpr float kSoftmaxMaskValue = -1e9f;

Shape with_last(Shape s, std::int64_t last) {
  s.back() = last;
  return s;
}

}  // namespace

MultiHeadAttentionLayer::MultiHeadAttentionLayer(std::int64_t num_heads, std::int64_t key_dim,
                                                 MultiHeadAttentionOptions options)
    : Layer(options.name),
      num_heads_(num_heads),
      key_dim_(key_dim),
      value_dim_(options.value_dim.value_or(key_dim)),
      options_(std::move(options)),
      seed_(options_.seed ? *options_.seed : next_random_seed()) {
  KERASCPP_CHECK_VALUE(num_heads_ > 0 && key_dim_ > 0 && value_dim_ > 0,
                       "{}: num_heads ({}), key_dim ({}) and value_dim ({}) must be positive", where(), num_heads_,
                       key_dim_, value_dim_);
  KERASCPP_CHECK_VALUE(options_.dropout >= 0.0 && options_.dropout < 1.0, "{}: dropout must be in [0, 1), got {}",
                       where(), options_.dropout);
  KERASCPP_CHECK_VALUE(!options_.output_shape || *options_.output_shape > 0,
                       "{}: output_shape must be positive, got {}", where(), *options_.output_shape);
}

KerasTensor MultiHeadAttentionLayer::call(const KerasTensor& query, const KerasTensor& value,
                                          const MultiHeadAttentionCall& c) {
  CallForm form{true, c.key.defined(), c.attention_mask.defined(), c.use_causal_mask};
  KERASCPP_CHECK_VALUE(
      !form_.set || (form.has_key == form_.has_key && form.has_mask == form_.has_mask && form.causal == form_.causal),
      "{}: every call of one layer must pass the same arguments (key, attention_mask, "
      "use_causal_mask) as its first call; make another MultiHeadAttention for this one",
      where());
  form_ = form;
  if (!built()) set_input_specs(input_specs({}));
  std::vector<KerasTensor> inputs{query, value};
  if (form_.has_key) inputs.push_back(c.key);
  if (form_.has_mask) inputs.push_back(c.attention_mask);
  return call_multi(inputs).at(0);
}

std::vector<Shape> MultiHeadAttentionLayer::compute_output_shapes(const std::vector<Shape>& in) {
  if (!form_.set) form_ = {true, in.size() == 3, false, false};  // called as a plain layer: {q, v[, k]}
  const std::size_t want = 2 + (form_.has_key ? 1 : 0) + (form_.has_mask ? 1 : 0);
  KERASCPP_CHECK_VALUE(in.size() == want, "{}: expected {} inputs (query, value{}{}), got {}", where(), want,
                       form_.has_key ? ", key" : "", form_.has_mask ? ", attention_mask" : "", in.size());
  auto full = [](const Shape& s) { return shape_str(detail::with_batch(-1, s)); };
  for (std::size_t i = 0; i < 2 + (form_.has_key ? 1u : 0u); ++i)
    KERASCPP_CHECK_SHAPE(in[i].size() == 2,
                         "{}: query, value and key must be (batch, steps, features), got {}; attention "
                         "over more axes is not supported",
                         where(), full(in[i]));
  const Shape& q = in[0];
  const Shape& v = in[1];
  KERASCPP_CHECK_SHAPE(!form_.has_key || in[2][0] == v[0], "{}: key {} and value {} must have the same number of steps",
                       where(), full(in[2]), full(v));
  if (form_.has_mask) {
    const Shape& m = in.back();
    KERASCPP_CHECK_SHAPE((m == Shape{q[0], v[0]}),
                         "{}: attention_mask must be (batch, {}, {}) for query {} and value {}, got {}", where(), q[0],
                         v[0], full(q), full(v), full(m));
  }
  return {{q[0], options_.output_shape.value_or(q[1])}};
}

MultiHeadAttentionLayer::Projection MultiHeadAttentionLayer::add_projection(const std::string& prefix,
                                                                            const Shape& kernel_shape,
                                                                            const Shape& bias_shape,
                                                                            std::uint64_t seed) {
  Projection p;
  p.kernel = &add_weight(prefix + "/kernel", kernel_shape, options_.kernel_initializer, true, seed,
                         options_.kernel_regularizer, options_.kernel_constraint);
  if (options_.use_bias)
    p.bias = &add_weight(prefix + "/bias", bias_shape, options_.bias_initializer, true, seed + 1,
                         options_.bias_regularizer, options_.bias_constraint);
  return p;
}

void MultiHeadAttentionLayer::build(const std::vector<Shape>& in) {
  const std::int64_t E = in[0][1], Ev = in[1][1], Ek = form_.has_key ? in[2][1] : Ev;
  out_dim_ = options_.output_shape.value_or(E);
  // Keras' order (query, key, value, output), each sublayer with its own seed.
  query_ = add_projection("query_dense", {E, num_heads_, key_dim_}, {num_heads_, key_dim_}, seed_);
  key_ = add_projection("key_dense", {Ek, num_heads_, key_dim_}, {num_heads_, key_dim_}, seed_ + 2);
  value_ = add_projection("value_dense", {Ev, num_heads_, value_dim_}, {num_heads_, value_dim_}, seed_ + 4);
  output_ = add_projection("output_dense", {num_heads_, value_dim_, out_dim_}, {out_dim_}, seed_ + 6);
  set_input_specs(input_specs({E, Ev, Ek}));
}

std::vector<InputSpec> MultiHeadAttentionLayer::input_specs(const std::vector<std::int64_t>& features) const {
  auto sequence = [&](std::size_t i) {
    InputSpec s{.ndim = 3, .layout = "(batch, steps, features)"};
    if (i < features.size()) s.axes = {{-1, features[i]}};
    return s;
  };
  std::vector<InputSpec> specs{sequence(0), sequence(1)};
  if (form_.has_key) specs.push_back(sequence(2));
  if (form_.has_mask)
    specs.push_back(InputSpec{.ndim = 3,
                              .dtype = DType::uint8,
                              .layout = "(batch, query steps, value steps)",
                              .rank_hint = "declare the mask Input({T, S}, DType::uint8)"});
  return specs;
}

Tensor MultiHeadAttentionLayer::project(ReplicaContext& ctx, const Projection& p, const Tensor& x,
                                        std::int64_t out_features) {
  const int r = ctx.replica_id;
  const std::int64_t in_features = x.dim(-1);
  Tensor y(with_last(x.shape(), out_features), DType::float32, x.device());
  Tensor y2 = y.reshape({-1, out_features});
  ctx.backend->dense_forward(x.reshape({-1, in_features}), p.kernel->value(r).reshape({in_features, out_features}),
                             p.bias ? p.bias->value(r).reshape({out_features}) : Tensor(), ActivationKind::linear, y2);
  return y;
}

Tensor MultiHeadAttentionLayer::project_backward(ReplicaContext& ctx, const Projection& p, const Tensor& x,
                                                 const Tensor& dy, bool want_dx) {
  const int r = ctx.replica_id;
  const std::int64_t in_features = x.dim(-1), out_features = dy.dim(-1);
  Tensor x2 = x.reshape({-1, in_features}), dy2 = dy.reshape({-1, out_features});
  const bool first = p.kernel->take_first_grad(r);
  Tensor dw = p.kernel->grad(r).reshape({in_features, out_features});
  ctx.backend->matmul(x2, true, dy2, false, dw, !first);
  if (p.bias) {
    const bool first_b = p.bias->take_first_grad(r);
    Tensor db = p.bias->grad(r).reshape({out_features});
    ctx.backend->sum_to_last_axis(dy2, db, !first_b);
  }
  if (!want_dx) return Tensor();
  Tensor dx(x.shape(), DType::float32, x.device());
  Tensor dx2 = dx.reshape({-1, in_features});
  ctx.backend->matmul(dy2, false, p.kernel->value(r).reshape({in_features, out_features}), true, dx2, false);
  return dx;
}

// saved: {Qh (scaled) [B,H,T,Dk], Kh [B,H,S,Dk], Vh [B,H,S,Dv], probs [B,H,T,S],
//         dropout mask (or undefined), context [B,T,H·Dv], attention mask [B,T,S] (or undefined),
//         the probabilities after dropout (probs itself without)}
std::vector<Tensor> MultiHeadAttentionLayer::forward(ReplicaContext& ctx, const std::vector<Tensor>& in,
                                                     LayerState& st) {
  Backend& be = *ctx.backend;
  const Tensor& query = in[0];
  const Tensor& value = in[1];
  const Tensor& key = in[static_cast<std::size_t>(key_input())];
  const std::int64_t B = query.dim(0), T = query.dim(1), S = value.dim(1), H = num_heads_;
  const Device dev = query.device();

  // The attention mask: Keras masks of query and value (and key when given), the explicit mask, causal.
  const auto& masks = st.input_masks;
  auto mask_of = [&](std::size_t i) { return i < masks.size() ? masks[i] : Tensor(); };
  Tensor value_mask = mask_of(1);
  if (form_.has_key && mask_of(2).defined()) {
    if (value_mask.defined()) {
      Tensor both;
      be.mask_and(value_mask, mask_of(2), both);
      value_mask = both;
    } else {
      value_mask = mask_of(2);
    }
  }
  const Tensor explicit_mask = form_.has_mask ? in.back() : Tensor();
  Tensor mask;
  if (mask_of(0).defined() || value_mask.defined() || explicit_mask.defined() || form_.causal) {
    mask = Tensor({B, T, S}, DType::uint8, dev);
    be.attention_mask(mask_of(0), value_mask, explicit_mask, form_.causal, mask);
  }

  // Projections, heads moved ahead of the steps: [B, H, steps, dim].
  auto heads = [&](const Tensor& x, std::int64_t steps, std::int64_t dim) {
    Tensor h;
    be.transpose(x.reshape({B, steps, H, dim}), {0, 2, 1, 3}, h);
    return h;
  };
  Tensor qh = heads(project(ctx, query_, query, H * key_dim_), T, key_dim_);
  be.scale(qh, static_cast<float>(1.0 / std::sqrt(static_cast<double>(key_dim_))));
  Tensor kh = heads(project(ctx, key_, key, H * key_dim_), S, key_dim_);
  Tensor vh = heads(project(ctx, value_, value, H * value_dim_), S, value_dim_);

  Tensor scores;
  be.batched_matmul(qh.reshape({B * H, T, key_dim_}), false, kh.reshape({B * H, S, key_dim_}), true, scores, false);
  scores = scores.reshape({B, H, T, S});
  const bool with_dropout = options_.dropout > 0.0;
  if (mask.defined()) be.masked_fill(scores, mask, with_dropout ? kSoftmaxMaskValue : kLargeNegative);
  Tensor probs;
  be.softmax_axis_forward(scores, -1, probs);
  if (mask.defined() && with_dropout) be.masked_fill(probs, mask, 0.f);
  Tensor used = probs, drop_mask;
  if (ctx.training && with_dropout) {
    used = Tensor(probs.shape(), DType::float32, dev);
    drop_mask = Tensor(probs.shape(), DType::float32, dev);
    be.dropout_forward(probs, static_cast<float>(options_.dropout), seed_ ^ ctx.rng.next_u64(), used, drop_mask);
  }
  Tensor context_h;
  be.batched_matmul(used.reshape({B * H, T, S}), false, vh.reshape({B * H, S, value_dim_}), false, context_h, false);
  Tensor context;
  be.transpose(context_h.reshape({B, H, T, value_dim_}), {0, 2, 1, 3}, context);
  context = context.reshape({B, T, H * value_dim_});
  Tensor out = project(ctx, output_, context, out_dim_);
  st.saved = {qh, kh, vh, probs, drop_mask, context, mask, used};
  return {out};
}

std::vector<Tensor> MultiHeadAttentionLayer::backward(ReplicaContext& ctx, const std::vector<Tensor>& in,
                                                      const std::vector<Tensor>&, const std::vector<Tensor>& grads,
                                                      LayerState& st) {
  Backend& be = *ctx.backend;
  const Tensor &qh = st.saved[0], &kh = st.saved[1], &vh = st.saved[2], &probs = st.saved[3];
  const Tensor &drop_mask = st.saved[4], &context = st.saved[5], &mask = st.saved[6];
  const std::int64_t B = qh.dim(0), H = num_heads_, T = qh.dim(2), S = kh.dim(2);
  const std::int64_t Dk = key_dim_, Dv = value_dim_;

  Tensor dcontext = project_backward(ctx, output_, context, grads[0], true);
  Tensor dcontext_h;
  be.transpose(dcontext.reshape({B, T, H, Dv}), {0, 2, 1, 3}, dcontext_h);
  dcontext_h = dcontext_h.reshape({B * H, T, Dv});

  const Tensor& used = st.saved[7];
  Tensor dused, dvh;
  be.batched_matmul(dcontext_h, false, vh.reshape({B * H, S, Dv}), true, dused, false);  // [BH, T, S]
  be.batched_matmul(used.reshape({B * H, T, S}), true, dcontext_h, false, dvh, false);   // [BH, S, Dv]
  Tensor dprobs = dused.reshape({B, H, T, S});
  if (drop_mask.defined()) {
    Tensor d(dprobs.shape(), DType::float32, dprobs.device());
    be.multiply(dprobs, drop_mask, d);
    dprobs = d;
  }
  // Masked positions were replaced (where) before the softmax: they pass no gradient back.
  if (mask.defined() && options_.dropout > 0.0) be.masked_fill(dprobs, mask, 0.f);
  Tensor dscores;
  be.softmax_axis_backward(probs, dprobs, -1, dscores);
  if (mask.defined()) be.masked_fill(dscores, mask, 0.f);
  dscores = dscores.reshape({B * H, T, S});
  Tensor dqh, dkh;
  be.batched_matmul(dscores, false, kh.reshape({B * H, S, Dk}), false, dqh, false);  // [BH, T, Dk]
  be.scale(dqh, static_cast<float>(1.0 / std::sqrt(static_cast<double>(Dk))));
  be.batched_matmul(dscores, true, qh.reshape({B * H, T, Dk}), false, dkh, false);  // [BH, S, Dk]

  auto steps_first = [&](const Tensor& h, std::int64_t steps, std::int64_t dim) {
    Tensor x;
    be.transpose(h.reshape({B, H, steps, dim}), {0, 2, 1, 3}, x);
    return x.reshape({B, steps, H * dim});
  };
  const bool want = st.need_input_grads;
  Tensor dquery = project_backward(ctx, query_, in[0], steps_first(dqh, T, Dk), want);
  Tensor dkey = project_backward(ctx, key_, in[static_cast<std::size_t>(key_input())], steps_first(dkh, S, Dk), want);
  Tensor dvalue = project_backward(ctx, value_, in[1], steps_first(dvh, S, Dv), want);
  std::vector<Tensor> result{dquery, dvalue};
  if (form_.has_key) result.push_back(dkey);
  else if (want) be.add_inplace(result[1], dkey);  // the key was the value
  if (form_.has_mask) result.emplace_back();       // the mask is not differentiable
  return result;
}

std::vector<Tensor> MultiHeadAttentionLayer::compute_output_masks(ReplicaContext&, const std::vector<Tensor>&,
                                                                  const std::vector<Tensor>&, const LayerState& st) {
  return {st.input_masks.empty() ? Tensor() : st.input_masks[0]};  // Keras: the output keeps the query's mask
}

std::vector<Layer::WeightGroup> MultiHeadAttentionLayer::weight_groups() {
  // Keras writes the sublayers in name order, including the weightless dropout and softmax.
  auto vars = [](const Projection& p) {
    std::vector<Variable*> v{p.kernel};
    if (p.bias) v.push_back(p.bias);
    return v;
  };
  return {{"", {}},
          {"_dropout_layer", {}},
          {"_softmax", {}},
          {"key_dense", vars(key_)},
          {"output_dense", vars(output_)},
          {"query_dense", vars(query_)},
          {"value_dense", vars(value_)}};
}

Json MultiHeadAttentionLayer::get_config() const {
  detail::Json config = {
      {"name", name()},
      {"num_heads", num_heads_},
      {"key_dim", key_dim_},
      {"value_dim", value_dim_},
      {"dropout", options_.dropout},
      {"use_bias", options_.use_bias},
      {"output_shape", options_.output_shape ? detail::Json::array({*options_.output_shape}) : detail::Json(nullptr)},
      {"attention_axes", detail::Json::array({1})}};
  if (options_.seed) config["seed"] = *options_.seed;
  detail::add_weight_options(config, "kernel", options_.kernel_regularizer, options_.kernel_constraint);
  detail::add_weight_options(config, "bias", options_.bias_regularizer, options_.bias_constraint);
  return config;
}

Layer::CallArguments MultiHeadAttentionLayer::call_arguments(std::size_t num_inputs) const {
  CallArguments call{std::vector<std::string>(num_inputs), false, "{}"};
  if (form_.has_key && num_inputs > 2) call.keywords[2] = "key";
  if (form_.has_mask) call.keywords.back() = "attention_mask";
  if (form_.causal) call.extra_kwargs_json = R"({"use_causal_mask": true})";
  return call;
}

MultiHeadAttentionRef MultiHeadAttention(std::int64_t num_heads, std::int64_t key_dim,
                                         MultiHeadAttentionOptions options) {
  return MultiHeadAttentionRef(std::make_shared<MultiHeadAttentionLayer>(num_heads, key_dim, std::move(options)));
}

KERASCPP_REGISTER_LAYER("MultiHeadAttention", [](const LayerConfig& c) -> LayerRef {
  const Json* axes = c.find("attention_axes");
  if (axes && *axes != Json::array({1}) && *axes != Json(1))
    c.fail("'attention_axes' is " + axes->dump() + "; kerascpp attends over axis 1 of (batch, steps, features)");
  layers::MultiHeadAttentionOptions o{.dropout = c.get("dropout", 0.0),
                                      .use_bias = c.get("use_bias", true),
                                      .kernel_regularizer = c.regularizer("kernel_regularizer"),
                                      .bias_regularizer = c.regularizer("bias_regularizer"),
                                      .kernel_constraint = c.constraint("kernel_constraint"),
                                      .bias_constraint = c.constraint("bias_constraint"),
                                      .name = c.name()};
  if (c.find("value_dim")) o.value_dim = c.get<std::int64_t>("value_dim", 0);
  if (const Json* out = c.find("output_shape")) {
    if (out->is_number_integer()) o.output_shape = out->get<std::int64_t>();
    else if (out->is_array() && out->size() == 1) o.output_shape = (*out)[0].get<std::int64_t>();
    else c.fail("'output_shape' is " + out->dump() + "; kerascpp takes one size (the last axis)");
  }
  if (c.find("seed")) o.seed = c.get<std::uint64_t>("seed", 0);
  return layers::MultiHeadAttention(c.required<std::int64_t>("num_heads"), c.required<std::int64_t>("key_dim"), o);
});

}  // namespace kerascpp::layers
