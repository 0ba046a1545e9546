// Attention and AdditiveAttention: Keras 3's layers.Attention (Luong-style dot-product attention)
// and layers.AdditiveAttention (Bahdanau-style: scores = Σ_d scale_d·tanh(query_d + key_d)) on
// [query (batch, Tq, dim), value (batch, Tv, value_dim)] or [query, value, key (batch, Tv, dim)]:
// scores = query·keyᵀ (times the learned scalar `scale` with use_scale), masked positions get
// scores − 1e9 (the value's Keras mask, and s > t with use_causal_mask), softmax over Tv, dropout
// on the weights in training, output = weights·value, and rows of a masked query are zeros. The
// output carries the query's mask. Weights: `scale` with use_scale (Attention: a scalar, ones;
// AdditiveAttention: (dim,), glorot_uniform).
//
// Not supported yet: Attention's score_mode "concat" (a ValueError), return_attention_scores.
#pragma once
#include <optional>
#include <string>

#include "kerascpp/core/layer.hpp"

namespace kerascpp::layers {

/// The settings of Attention, with Keras' names and defaults (AdditiveAttention: use_scale true).
struct AttentionOptions {
  /// Learn the scale of the scores (variable "scale").
  bool use_scale = false;
  /// How scores are computed: "dot" (only this one so far).
  std::string score_mode = "dot";
  /// Dropout rate on the attention weights, in training only.
  double dropout = 0.0;
  /// Dropout seed; unset draws one from set_random_seed's stream.
  std::optional<std::uint64_t> seed{};
  /// The layer's name; "" gives it an automatic one ("attention", "attention_1", ...).
  std::string name{};
};

/// The arguments of one call besides the tensors.
struct AttentionCall {
  /// Position t attends to positions s <= t only.
  bool use_causal_mask = false;
};

/// Keras' Attention layer.
class AttentionLayer : public Layer {
 public:
  /// An Attention layer with `options`; ValueError for a score_mode or dropout it does not take.
  explicit AttentionLayer(AttentionOptions options);
  std::string class_name() const override { return "Attention"; }
  /// layer({query, value}) or layer({query, value, key}), with call's arguments.
  KerasTensor call(const std::vector<KerasTensor>& inputs, AttentionCall c = {});
  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& in) override;
  void build(const std::vector<Shape>& in) override;
  std::vector<Tensor> forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) override;
  std::vector<Tensor> backward(ReplicaContext& ctx, const std::vector<Tensor>& in, const std::vector<Tensor>& out,
                               const std::vector<Tensor>& grads, LayerState& st) override;
  std::vector<Tensor> compute_output_masks(ReplicaContext& ctx, const std::vector<Tensor>& in,
                                           const std::vector<Tensor>& out, const LayerState& st) override;
  CallArguments call_arguments(std::size_t num_inputs) const override;
  Json get_config() const override;
  /// Whether calls use the causal mask.
  bool use_causal_mask() const { return causal_; }

 protected:
  /// scores [B, Tq, Tv] from query [B, Tq, D] and key [B, Tv, D]; `kept` holds what
  /// scores_backward needs.
  virtual void scores_forward(ReplicaContext& ctx, const Tensor& q, const Tensor& k, Tensor& scores,
                              std::vector<Tensor>& kept);
  /// dq and dk from dscores (and the scale's gradient).
  virtual void scores_backward(ReplicaContext& ctx, const Tensor& q, const Tensor& k, const Tensor& dscores,
                               const std::vector<Tensor>& kept, Tensor& dq, Tensor& dk);
  AttentionOptions options_;   ///< as constructed (get_config writes them back)
  std::uint64_t seed_;         ///< the dropout stream's seed
  Variable* scale_ = nullptr;  ///< the learned score scale (use_scale), else null

 private:
  bool causal_ = false;
};

/// Keras' AdditiveAttention layer: Attention with additive scores.
class AdditiveAttentionLayer : public AttentionLayer {
 public:
  /// An AdditiveAttention layer (options.score_mode is not used).
  explicit AdditiveAttentionLayer(AttentionOptions options);
  std::string class_name() const override { return "AdditiveAttention"; }
  void build(const std::vector<Shape>& in) override;
  Json get_config() const override;

 protected:
  void scores_forward(ReplicaContext& ctx, const Tensor& q, const Tensor& k, Tensor& scores,
                      std::vector<Tensor>& kept) override;
  void scores_backward(ReplicaContext& ctx, const Tensor& q, const Tensor& k, const Tensor& dscores,
                       const std::vector<Tensor>& kept, Tensor& dq, Tensor& dk) override;
};

// Attention()({query, value}); Attention({.use_scale = true}) then ->call({q, v, k}, {.use_causal_mask = true})
/// Keras' Attention(use_scale, score_mode, dropout, seed).
LayerRef Attention(AttentionOptions options = {});
// AdditiveAttention()({query, value}); AdditiveAttention({.use_scale = false})
/// Keras' AdditiveAttention(use_scale=True, dropout, seed).
LayerRef AdditiveAttention(AttentionOptions options = {.use_scale = true});

}  // namespace kerascpp::layers
