// The official models' Transformer (Vaswani et al., tensorflow/models official/legacy/transformer)
// built from kerascpp layers: shared input/output embeddings scaled by sqrt(hidden), sinusoidal
// position encodings, pre-LayerNormalization encoder and decoder stacks (self-attention,
// encoder-decoder attention, ReLU feed-forward, dropout after each sublayer, a final
// LayerNormalization), logits from the embedding matrix. Shared by examples/transformer.cpp,
// the tests and the benchmark.
//
// The model takes three int32 inputs of `length` steps: the source ids, the decoder's input ids
// (the targets shifted right behind a start id) and the positions 0..length-1 (which pick the
// fixed sinusoid rows from a frozen Embedding: the official model adds the same table), and
// gives logits [length, vocab].
#pragma once
#include <kerascpp/kerascpp.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace examples::transformer {

namespace K = kerascpp;

// The official parameter sets (model_params.py): BASE, and TINY (its test configuration).
struct Params {
  std::int64_t vocab_size = 33708;
  std::int64_t hidden_size = 512;
  std::int64_t num_hidden_layers = 6;
  std::int64_t num_heads = 8;
  std::int64_t filter_size = 2048;
  double layer_postprocess_dropout = 0.1;
  double attention_dropout = 0.1;
  double relu_dropout = 0.1;
  double label_smoothing = 0.1;
  double learning_rate = 2.0;
  std::int64_t learning_rate_warmup_steps = 16000;
  double adam_beta1 = 0.9, adam_beta2 = 0.997, adam_epsilon = 1e-9;
};

inline Params base_params() { return {}; }
inline Params tiny_params() {
  Params p;
  p.hidden_size = 32;
  p.num_heads = 4;
  p.filter_size = 256;
  return p;
}
// The smallest model worth saving and loading (one layer each side, hidden 8): the `.keras` tests'.
inline Params micro_params() {
  Params p = tiny_params();
  p.vocab_size = 11;
  p.hidden_size = 8;
  p.num_heads = 2;
  p.filter_size = 12;
  p.num_hidden_layers = 1;
  return p;
}

// The official EmbeddingSharedWeights: one [vocab, hidden] matrix (RandomNormal(0, hidden^-0.5)).
// Called on int ids it embeds them, times sqrt(hidden); called on float hidden states
// [.., hidden] it gives logits = hidden · matrixᵀ. The two uses share (and sum) the gradient.
class EmbeddingSharedWeights : public K::Layer {
 public:
  EmbeddingSharedWeights(std::int64_t vocab_size, std::int64_t hidden_size, std::uint64_t seed,
                         std::string name = "embedding_shared_weights")
      : K::Layer(std::move(name)), vocab_(vocab_size), hidden_(hidden_size), seed_(seed) {
    K::InputSpec any;
    any.dtype.reset();  // ids (int32) or hidden states (float32)
    set_input_spec(any);
  }
  std::string class_name() const override { return "EmbeddingSharedWeights"; }
  // Ids [..] embed to [.., hidden]; float hidden states [.., hidden] project to [.., vocab].
  std::vector<K::Shape> compute_output_shapes(const std::vector<K::Shape>& in) override {
    K::Shape out = in[0];
    out.push_back(hidden_);
    return {out};
  }
  std::vector<K::Shape> compute_output_shapes_for(const std::vector<K::Shape>& in,
                                                  const std::vector<K::DType>& dtypes) override {
    if (dtypes[0] != K::DType::float32) return compute_output_shapes(in);
    if (in[0].empty() || in[0].back() != hidden_)
      throw K::ShapeError(where() + ": float inputs are hidden states [.., " + std::to_string(hidden_) + "], got " +
                          K::shape_str(in[0]));
    K::Shape out = in[0];
    out.back() = vocab_;
    return {out};
  }
  void build(const std::vector<K::Shape>&) override {
    table_ = &add_weight("weights", {vocab_, hidden_}, "zeros", true, seed_);
    std::mt19937_64 gen(seed_);
    std::normal_distribution<float> normal(0.f, static_cast<float>(1.0 / std::sqrt(static_cast<double>(hidden_))));
    std::vector<float> values(static_cast<std::size_t>(vocab_ * hidden_));
    for (auto& v : values) v = normal(gen);
    table_->assign(K::Tensor::from_vector({vocab_, hidden_}, values));
  }
  std::vector<K::Tensor> forward(K::ReplicaContext& ctx, const std::vector<K::Tensor>& in, K::LayerState&) override {
    const K::Tensor& table = table_->value(ctx.replica_id);
    const K::Tensor& x = in[0];
    if (x.dtype() != K::DType::float32) {
      K::Tensor y, no_mask;
      ctx.backend->gather_rows(table, x, y, no_mask);
      ctx.backend->scale(y, scale());
      return {y};
    }
    K::Shape out_shape = x.shape();
    out_shape.back() = vocab_;
    K::Tensor logits(out_shape, K::DType::float32, x.device());
    K::Tensor logits2 = logits.reshape({-1, vocab_});
    ctx.backend->matmul(x.reshape({-1, hidden_}), false, table, true, logits2, false);
    return {logits};
  }
  std::vector<K::Tensor> backward(K::ReplicaContext& ctx, const std::vector<K::Tensor>& in,
                                  const std::vector<K::Tensor>&, const std::vector<K::Tensor>& grads,
                                  K::LayerState& st) override {
    const int r = ctx.replica_id;
    const bool first = table_->take_first_grad(r);
    K::Tensor& dtable = table_->grad(r);
    const K::Tensor& x = in[0];
    if (x.dtype() != K::DType::float32) {
      K::Tensor dy(grads[0].shape(), K::DType::float32, grads[0].device());
      ctx.backend->copy(grads[0], dy);
      ctx.backend->scale(dy, scale());
      ctx.backend->scatter_add_rows(x, dy, dtable, !first);
      return {K::Tensor()};  // ids are not differentiable
    }
    K::Tensor dy2 = grads[0].reshape({-1, vocab_}), x2 = x.reshape({-1, hidden_});
    ctx.backend->matmul(dy2, true, x2, false, dtable, !first);  // [vocab, hidden]
    if (!st.need_input_grads) return {K::Tensor()};
    K::Tensor dx(x.shape(), K::DType::float32, x.device());
    K::Tensor dx2 = dx.reshape({-1, hidden_});
    ctx.backend->matmul(dy2, false, table_->value(r), false, dx2, false);
    return {dx};
  }
  K::Json get_config() const override {
    return K::Json{{"name", name()}, {"vocab_size", vocab_}, {"hidden_size", hidden_}};
  }

 private:
  float scale() const { return static_cast<float>(std::sqrt(static_cast<double>(hidden_))); }

  std::int64_t vocab_, hidden_;
  std::uint64_t seed_;
  K::Variable* table_ = nullptr;
};

// So that load_model and model_from_json rebuild the layer from its config (the weights come
// from the archive after it is made).
inline void register_transformer_layers() {
  K::register_layer_class("EmbeddingSharedWeights", [](const K::LayerConfig& c) -> K::LayerRef {
    return std::make_shared<EmbeddingSharedWeights>(c.required<std::int64_t>("vocab_size"),
                                                    c.required<std::int64_t>("hidden_size"), 0, c.name());
  });
}

// The official get_position_encoding: [length, hidden], sin of position·timescale in the first
// half of the channels and cos in the second, timescales geometric from 1 to 1e4.
inline K::Tensor position_encoding(std::int64_t length, std::int64_t hidden) {
  const std::int64_t half = hidden / 2;
  const double increment = std::log(1.0e4 / 1.0) / static_cast<double>(std::max<std::int64_t>(half - 1, 1));
  std::vector<float> table(static_cast<std::size_t>(length * hidden), 0.f);
  for (std::int64_t p = 0; p < length; ++p)
    for (std::int64_t i = 0; i < half; ++i) {
      const double t = static_cast<double>(p) * std::exp(static_cast<double>(i) * -increment);
      table[static_cast<std::size_t>(p * hidden + i)] = static_cast<float>(std::sin(t));
      table[static_cast<std::size_t>(p * hidden + half + i)] = static_cast<float>(std::cos(t));
    }
  return K::Tensor::from_vector({length, hidden}, table);
}

struct Built {
  K::Model model;
  std::shared_ptr<EmbeddingSharedWeights> embedding;
};

// LayerNormalization → sublayer → dropout → residual add (the official PrePostProcessingWrapper).
template <class Sublayer>
K::KerasTensor pre_post(const Params& p, const K::KerasTensor& x, Sublayer&& sublayer) {
  auto y = K::layers::LayerNormalization({.epsilon = 1e-6f})(x);
  y = sublayer(y);
  y = K::layers::Dropout(p.layer_postprocess_dropout)(y);
  return K::layers::Add()({x, y});
}

inline K::KerasTensor feed_forward(const Params& p, const K::KerasTensor& x) {
  auto h = K::layers::Dense(p.filter_size, {.activation = "relu"})(x);
  h = K::layers::Dropout(p.relu_dropout)(h);
  return K::layers::Dense(p.hidden_size)(h);
}

inline K::layers::MultiHeadAttentionRef attention(const Params& p) {
  // The official attention layer: no biases on the projections, query scaled by depth^-0.5.
  return K::layers::MultiHeadAttention(p.num_heads, p.hidden_size / p.num_heads,
                                       {.dropout = p.attention_dropout, .use_bias = false});
}

inline Built build_transformer(const Params& p, std::int64_t length, std::uint64_t seed) {
  if (p.hidden_size % p.num_heads != 0 || p.hidden_size % 2 != 0)
    throw K::ValueError("Transformer: hidden_size must be even and a multiple of num_heads");
  auto source = K::Input({length}, K::DType::int32, "inputs");
  auto decoder_ids = K::Input({length}, K::DType::int32, "decoder_inputs");
  auto positions = K::Input({length}, K::DType::int32, "positions");
  auto embedding = std::make_shared<EmbeddingSharedWeights>(p.vocab_size, p.hidden_size, seed);
  auto position_table = K::layers::Embedding(length, p.hidden_size, {.name = "position_encoding"});
  auto signal = position_table(positions);
  position_table->set_trainable(false);
  position_table->variables().front()->assign(position_encoding(length, p.hidden_size));

  auto x = K::layers::Add()({(*embedding)(source), signal});
  x = K::layers::Dropout(p.layer_postprocess_dropout)(x);
  for (std::int64_t i = 0; i < p.num_hidden_layers; ++i) {
    auto self_attention = attention(p);
    x = pre_post(p, x, [&](const K::KerasTensor& y) { return self_attention(y, y); });
    x = pre_post(p, x, [&](const K::KerasTensor& y) { return feed_forward(p, y); });
  }
  auto encoded = K::layers::LayerNormalization({.epsilon = 1e-6f})(x);

  x = K::layers::Add()({(*embedding)(decoder_ids), signal});
  x = K::layers::Dropout(p.layer_postprocess_dropout)(x);
  for (std::int64_t i = 0; i < p.num_hidden_layers; ++i) {
    auto self_attention = attention(p), encoder_attention = attention(p);
    x = pre_post(p, x, [&](const K::KerasTensor& y) { return self_attention(y, y, {.use_causal_mask = true}); });
    x = pre_post(p, x, [&](const K::KerasTensor& y) { return encoder_attention(y, encoded); });
    x = pre_post(p, x, [&](const K::KerasTensor& y) { return feed_forward(p, y); });
  }
  auto decoded = K::layers::LayerNormalization({.epsilon = 1e-6f})(x);
  auto logits = (*embedding)(decoded);
  return {K::Model(std::vector<K::KerasTensor>{source, decoder_ids, positions}, {logits}, "transformer"), embedding};
}

}  // namespace examples::transformer
