// Embedding: Keras' layers.Embedding(input_dim, output_dim): integer ids of any shape (int32,
// int64, uint8, or float32 holding integers) -> their rows of an (input_dim, output_dim) table,
// (batch, ...) -> (batch, ..., output_dim). Weight `embeddings`, initialised uniform(-0.05, 0.05)
// as Keras. The ids get no gradient (they are not differentiable), the table a row-wise sum.
//
// mask_zero: id 0 is reserved for padding, as in Keras: forward() also computes the mask
// (id != 0, uint8 of the ids' shape), which the graph passes downstream as the output's Keras
// mask (layers with supports_masking() carry it on; attention and RNNs skip padded steps).
#pragma once
#include <optional>

#include "kerascpp/core/layer.hpp"

namespace kerascpp::layers {

/// Embedding's settings, with Keras' names and defaults.
struct EmbeddingOptions {
  initializers::Initializer embeddings_initializer = "uniform";  ///< Keras' RandomUniform(-0.05, 0.05)
  /// Id 0 is padding: the output carries a mask that is 0 there (see above).
  bool mask_zero = false;
  /// Penalty on the table added to the loss (none by default).
  regularizers::Regularizer embeddings_regularizer{};
  /// Projection of the table after each optimizer update (none by default).
  constraints::Constraint embeddings_constraint{};
  std::optional<std::uint64_t> seed{};  ///< initializer seed; default draws from set_random_seed's stream
  /// The layer's name; "" gives it an automatic one from its class ("conv2d", "conv2d_1", ...).
  std::string name{};
};

/// Keras' Embedding (make it with Embedding()).
class EmbeddingLayer : public Layer {
 public:
  /// A table of `input_dim` rows of `output_dim` values.
  EmbeddingLayer(std::int64_t input_dim, std::int64_t output_dim, EmbeddingOptions options);
  std::string class_name() const override { return "Embedding"; }
  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& in) override;
  void build(const std::vector<Shape>& in) override;
  std::vector<Tensor> forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) override;
  std::vector<Tensor> backward(ReplicaContext& ctx, const std::vector<Tensor>& in, const std::vector<Tensor>& out,
                               const std::vector<Tensor>& grads, LayerState& st) override;
  Json get_config() const override;
  std::vector<Tensor> compute_output_masks(ReplicaContext& ctx, const std::vector<Tensor>& in,
                                           const std::vector<Tensor>& out, const LayerState& st) override;
  /// True with mask_zero.
  bool creates_masks() const override { return options_.mask_zero; }

  /// Keras' compute_mask: uint8 (id != 0) of the ids' shape with mask_zero, else an undefined
  /// tensor (no mask). Checks the ids like forward().
  Tensor compute_mask(ReplicaContext& ctx, const Tensor& ids);
  /// The (input_dim, output_dim) table (after build).
  Variable& embeddings() { return *embeddings_; }
  /// The number of ids (rows of the table).
  std::int64_t input_dim() const { return input_dim_; }
  /// The size of each id's vector.
  std::int64_t output_dim() const { return output_dim_; }

 private:
  // gather_rows with a bad-id error that names this layer.
  Tensor lookup(ReplicaContext& ctx, const Tensor& ids, Tensor& mask);

  std::int64_t input_dim_, output_dim_;
  EmbeddingOptions options_;
  Variable* embeddings_ = nullptr;
};

/// Keras' Embedding(input_dim, output_dim): integer ids -> their rows of a trainable table.
/// Embedding(10000, 64), Embedding(vocab, 32, {.mask_zero = true}).
LayerRef Embedding(std::int64_t input_dim, std::int64_t output_dim, EmbeddingOptions options = {});

}  // namespace kerascpp::layers
