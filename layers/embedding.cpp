#include "kerascpp/layers/embedding.hpp"
#include "kerascpp/core/layer_config.hpp"

#include "check.hpp"
#include "kerascpp/core/random.hpp"
#include "layer_util.hpp"

namespace kerascpp::layers {

// Saved between forward and backward: nothing (backward needs only the ids, its input); with
// mask_zero, saved = {undefined, mask} so the mask of the last call stays available.

EmbeddingLayer::EmbeddingLayer(std::int64_t input_dim, std::int64_t output_dim, EmbeddingOptions options)
    : Layer(options.name), input_dim_(input_dim), output_dim_(output_dim), options_(std::move(options)) {
  KERASCPP_CHECK_VALUE(input_dim_ > 0,
                       "Embedding '{}': input_dim must be positive (the vocabulary size, largest id + 1), got {}",
                       name(), input_dim_);
  KERASCPP_CHECK_VALUE(output_dim_ > 0,
                       "Embedding '{}': output_dim must be positive (the width of one embedding), got {}", name(),
                       output_dim_);
  // Ids of any rank and any of the id dtypes: the dtype is checked by the Backend op.
  set_input_spec({.min_ndim = 1, .dtype = std::nullopt, .layout = "(batch, ...) integer ids"});
}

std::vector<Shape> EmbeddingLayer::compute_output_shapes(const std::vector<Shape>& in) {
  Shape out = in[0];
  out.push_back(output_dim_);
  return {out};
}

void EmbeddingLayer::build(const std::vector<Shape>&) {
  embeddings_ = &add_weight("embeddings", {input_dim_, output_dim_}, options_.embeddings_initializer, true,
                            options_.seed ? *options_.seed : next_random_seed(), options_.embeddings_regularizer,
                            options_.embeddings_constraint);
  embeddings_->set_sparse_capable(true);  // its gradient touches only the looked-up rows
}

Tensor EmbeddingLayer::lookup(ReplicaContext& ctx, const Tensor& ids, Tensor& mask) {
  Tensor y;
  try {
    ctx.backend->gather_rows(embeddings_->value(ctx.replica_id), ids, y, mask);
  } catch (const ValueError& e) {
    throw ValueError(fmt::format("Embedding '{}' (input_dim {}): {}; ids must be integers in [0, {})", name(),
                                 input_dim_, e.what(), input_dim_));
  }
  return y;
}

std::vector<Tensor> EmbeddingLayer::forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) {
  Tensor mask = options_.mask_zero ? Tensor(in[0].shape(), DType::uint8, in[0].device()) : Tensor();
  Tensor y = lookup(ctx, in[0], mask);
  if (options_.mask_zero) st.saved = {Tensor(), mask};
  return {y};
}

std::vector<Tensor> EmbeddingLayer::backward(ReplicaContext& ctx, const std::vector<Tensor>& in,
                                             const std::vector<Tensor>&, const std::vector<Tensor>& grads,
                                             LayerState& st) {
  const int r = ctx.replica_id;
  if (embeddings_->rows_gradient()) {
    // Row gradient (IndexedSlices): the reducer sums it over replicas without densifying the
    // table when that moves less (distribute/gradient_buckets).
    // Deduplicated here (sorted ids, each row summed in position order as scatter_add_rows
    // does): grads[0]'s buffer may be reused later in the backward pass.
    Tensor ids, rows;
    ctx.backend->unique_row_sums(in[0], grads[0], input_dim_, ids, rows);
    embeddings_->add_grad_rows(r, std::move(ids), std::move(rows));
  } else {
    const bool first = embeddings_->take_first_grad(r);
    ctx.backend->scatter_add_rows(in[0], grads[0], embeddings_->grad(r), !first);
  }
  // Ids are not differentiable. Float ids (from a float Dataset) get an explicit zero gradient
  // when one is asked for, so an upstream float layer still receives a tensor.
  if (!st.need_input_grads || in[0].dtype() != DType::float32) return {Tensor()};
  return {Tensor::zeros(in[0].shape(), DType::float32, in[0].device())};
}

std::vector<Tensor> EmbeddingLayer::compute_output_masks(ReplicaContext&, const std::vector<Tensor>&,
                                                         const std::vector<Tensor>&, const LayerState& st) {
  return {options_.mask_zero ? st.saved.at(1) : Tensor()};
}

Tensor EmbeddingLayer::compute_mask(ReplicaContext& ctx, const Tensor& ids) {
  if (!options_.mask_zero) return Tensor();
  Tensor mask(ids.shape(), DType::uint8, ids.device());
  lookup(ctx, ids, mask);
  return mask;
}

Json EmbeddingLayer::get_config() const {
  detail::Json config = {
      {"name", name()}, {"input_dim", input_dim_}, {"output_dim", output_dim_}, {"mask_zero", options_.mask_zero}};
  detail::add_weight_options(config, "embeddings", options_.embeddings_regularizer, options_.embeddings_constraint);
  return config;
}

LayerRef Embedding(std::int64_t input_dim, std::int64_t output_dim, EmbeddingOptions options) {
  return std::make_shared<EmbeddingLayer>(input_dim, output_dim, std::move(options));
}

KERASCPP_REGISTER_LAYER("Embedding", [](const LayerConfig& c) {
  return layers::Embedding(c.required<std::int64_t>("input_dim"), c.required<std::int64_t>("output_dim"),
                           {.mask_zero = c.get("mask_zero", false),
                            .embeddings_regularizer = c.regularizer("embeddings_regularizer"),
                            .embeddings_constraint = c.constraint("embeddings_constraint"),
                            .name = c.name()});
});

}  // namespace kerascpp::layers
