// MultiHeadAttention: Keras' layers.MultiHeadAttention(num_heads, key_dim). For a query
// [B, T, E] and a value [B, S, Ev] (key defaults to the value):
//   Q = query·Wq + bq, K = key·Wk + bk, V = value·Wv + bv      (each [B, ·, heads, dim])
//   scores = softmax(Q·Kᵀ / sqrt(key_dim)) masked,  out = (scores·V)·Wo + bo   ([B, T, E or output_shape])
// with Keras' weight layouts (query_dense/kernel [E, heads, key_dim], bias [heads, key_dim], ...,
// output_dense/kernel [heads, value_dim, E]) and .weights.h5 groups, so Keras loads them.
//
// Masks, as Keras: the Keras masks of query ([B, T]) and value/key ([B, S]) (from an
// Embedding(mask_zero) upstream), an explicit attention_mask input ([B, T, S], uint8, 1 keeps)
// and use_causal_mask (position t sees s <= t) are ANDed. Masked scores are replaced before the
// softmax like Keras: with dropout 0 by a very large negative number (a fully masked row then
// attends uniformly, as Keras' dot_product_attention); with dropout > 0 by -1e9 and the masked
// probabilities zeroed after the softmax (Keras' masked Softmax). The output carries the query's mask.
//
// Call it on {query, value} or {query, value, key}; MultiHeadAttentionCall says what the inputs
// are. One layer keeps one call form (which inputs, causal or not) for all of its calls.
#pragma once
#include <optional>

#include "kerascpp/core/layer.hpp"

namespace kerascpp::layers {

/// MultiHeadAttention's settings, with Keras' names and defaults.
struct MultiHeadAttentionOptions {
  std::optional<std::int64_t> value_dim{};  ///< default key_dim
  double dropout = 0.0;                     ///< on the attention probabilities, in training
  /// Whether the layer adds a bias.
  bool use_bias = true;
  std::optional<std::int64_t> output_shape{};  ///< the last axis of the output; default the query's
  /// How the kernel starts: an initializer name or initializers::Constant(v).
  initializers::Initializer kernel_initializer = "glorot_uniform";
  /// How the bias starts.
  initializers::Initializer bias_initializer = "zeros";
  /// Penalty on the kernel added to the loss (none by default).
  regularizers::Regularizer kernel_regularizer{};
  /// Penalty on the bias added to the loss (none by default).
  regularizers::Regularizer bias_regularizer{};
  /// Projection of the kernel after each optimizer update (none by default).
  constraints::Constraint kernel_constraint{};
  /// Projection of the bias after each optimizer update (none by default).
  constraints::Constraint bias_constraint{};
  std::optional<std::uint64_t> seed{};  ///< initializer and dropout seed
  /// The layer's name; "" gives it an automatic one from its class ("conv2d", "conv2d_1", ...).
  std::string name{};
};

/// What a call passes besides query and value (Keras' call arguments).
struct MultiHeadAttentionCall {
  KerasTensor key{};             ///< default: the value
  KerasTensor attention_mask{};  ///< uint8 [T, S] per example, 1 keeps a position
  /// Position t attends only to positions s <= t.
  bool use_causal_mask = false;
};

/// Keras' MultiHeadAttention (make it with MultiHeadAttention()).
class MultiHeadAttentionLayer : public Layer {
 public:
  /// `num_heads` heads of size `key_dim` for queries and keys.
  MultiHeadAttentionLayer(std::int64_t num_heads, std::int64_t key_dim, MultiHeadAttentionOptions options);
  std::string class_name() const override { return "MultiHeadAttention"; }
  bool supports_masking() const override { return true; }
  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& in) override;
  void build(const std::vector<Shape>& in) override;
  std::vector<Tensor> forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) override;
  std::vector<Tensor> backward(ReplicaContext& ctx, const std::vector<Tensor>& in, const std::vector<Tensor>& out,
                               const std::vector<Tensor>& grads, LayerState& st) override;
  std::vector<Tensor> compute_output_masks(ReplicaContext& ctx, const std::vector<Tensor>& in,
                                           const std::vector<Tensor>& out, const LayerState& st) override;
  std::vector<WeightGroup> weight_groups() override;
  Json get_config() const override;
  CallArguments call_arguments(std::size_t num_inputs) const override;

  /// Applies the layer to query and value (and what `call` adds), fixing the layer's call form.
  KerasTensor call(const KerasTensor& query, const KerasTensor& value, const MultiHeadAttentionCall& call = {});
  /// Whether the call form applies the causal mask.
  bool use_causal_mask() const { return form_.causal; }

 private:
  struct CallForm {
    bool set = false, has_key = false, has_mask = false, causal = false;
  };
  struct Projection {  // one of query/key/value/output_dense
    Variable* kernel = nullptr;
    Variable* bias = nullptr;
  };
  Projection add_projection(const std::string& prefix, const Shape& kernel_shape, const Shape& bias_shape,
                            std::uint64_t seed);
  // x [.., in] · kernel (viewed [in, out]) + bias, as one matmul over the leading axes.
  Tensor project(ReplicaContext& ctx, const Projection& p, const Tensor& x, std::int64_t out_features);
  // The projection's weight gradients and (when wanted) dL/dx, from dy [.., out].
  Tensor project_backward(ReplicaContext& ctx, const Projection& p, const Tensor& x, const Tensor& dy, bool want_dx);
  int key_input() const { return form_.has_key ? 2 : 1; }
  // The specs of the call form's inputs; features (query, value, key), when known, fix the last axes.
  std::vector<InputSpec> input_specs(const std::vector<std::int64_t>& features) const;

  std::int64_t num_heads_, key_dim_, value_dim_;
  MultiHeadAttentionOptions options_;
  std::uint64_t seed_;
  std::int64_t out_dim_ = 0;
  CallForm form_;
  Projection query_, key_, value_, output_;
};

/// The handle MultiHeadAttention() returns: a LayerRef that can also be called as Keras' layer is,
/// mha(query, value) or mha(query, value, {.key = k, .use_causal_mask = true}).
class MultiHeadAttentionRef : public LayerRef {
 public:
  /// A handle to `layer`.
  explicit MultiHeadAttentionRef(std::shared_ptr<MultiHeadAttentionLayer> layer)
      : LayerRef(layer), mha_(std::move(layer)) {}
  using LayerRef::operator();
  /// Applies the layer to query and value (MultiHeadAttentionLayer::call).
  KerasTensor operator()(const KerasTensor& query, const KerasTensor& value,
                         const MultiHeadAttentionCall& call = {}) const {
    return mha_->call(query, value, call);
  }

 private:
  std::shared_ptr<MultiHeadAttentionLayer> mha_;
};

/// Keras' MultiHeadAttention(num_heads, key_dim): MultiHeadAttention(8, 64),
/// MultiHeadAttention(4, 32, {.dropout = 0.1}).
MultiHeadAttentionRef MultiHeadAttention(std::int64_t num_heads, std::int64_t key_dim,
                                         MultiHeadAttentionOptions options = {});

}  // namespace kerascpp::layers
