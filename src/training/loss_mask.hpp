// Keras weights a model's loss by its output's mask. With a mask shaped like the output less its
// last axis (a sequence model's [batch, steps] from Embedding(mask_zero)), every step is one row of
// the loss: masked rows weigh zero and the batch's loss is Σ mask·w·loss / Σ mask (0 when every
// step is masked), as Keras 3's losses.loss.apply_mask makes it for "sum_over_batch_size" (w: the
// sample weights, 1 without).
// Metrics count only unmasked rows, as Keras' metric wrappers do.
//
// The count Σ mask is over the whole global batch (every replica of every worker), so N replicas
// train to the weights of one device. Keras under tf.distribute divides each replica's sum by its
// own count and averages the replicas instead, which differs whenever shards hold different
// numbers of padded steps.
#pragma once
#include <cstdint>
#include <string>

#include "kerascpp/distribute/context.hpp"
#include "kerascpp/tensor/tensor.hpp"

namespace kerascpp::detail {

struct LossMask {
  bool active = false;           // the output has a mask: the loss goes by rows
  std::int64_t rows = 0;         // this shard's mask elements (examples × steps)
  Tensor row_weights_host;       // float32 [rows] on the host: mask × sample weight (loss, weighted metrics)
  Tensor mask_host;              // float32 [rows] on the host: the mask alone (the other metrics)
  double valid_global = 0;       // Σ mask over the global batch
  double batch_rows_global = 0;  // examples in the global batch (Keras logs the loss per example)

  // 1 / Σ mask (Keras' divide_no_nan: 0 for none): what each row's loss and gradient are scaled by.
  double scale() const { return valid_global > 0 ? 1.0 / valid_global : 0.0; }
};

// Replica ctx's LossMask for its shard: `mask` is its output's mask after forward() (undefined
// when the output has none or the shard is empty), `pred` its output, `sample_weight_host` the
// shard's host sample weights (undefined: none). Every replica of a model whose output may carry a
// mask calls it in the same step, since the count is all-reduced between them.
LossMask make_loss_mask(ReplicaContext& ctx, const Tensor& mask, const Tensor& pred, const Tensor& sample_weight_host,
                        std::int64_t batch_rows_global, const std::string& model);

}  // namespace kerascpp::detail
