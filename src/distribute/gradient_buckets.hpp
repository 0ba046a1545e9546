// Gradient fusion: trainable variables are grouped, in the order backward finishes them, into
// buckets of about `bucket_bytes`. Every replica all-reduces bucket k as soon as all of its
// gradients are final, in the same bucket order (PyTorch DDP / Horovod tensor fusion).
#pragma once
#include <cstddef>
#include <unordered_map>
#include <vector>

#include "kerascpp/core/layer.hpp"
#include "kerascpp/distribute/context.hpp"

namespace kerascpp::detail {

struct BucketPlan {
  std::vector<std::vector<std::size_t>> buckets;  // indices into the trainable-variable list
  std::unordered_map<const Layer*, std::vector<std::size_t>> layer_variables;
  // Variables whose gradient comes as rows (Variable::rows_gradient): in no bucket; reduced one
  // by one after the buckets (distribute/row_gradients), in this order.
  std::vector<std::size_t> row_variables;
  // Plans buckets over `layers` given in backward-completion order.
  static BucketPlan make(const std::vector<std::shared_ptr<Layer>>& layers_in_backward_order,
                         const std::vector<Variable*>& trainable, std::size_t bucket_bytes);
};

// One replica's progress through the plan during one backward pass.
class BucketReducer {
 public:
  BucketReducer(const BucketPlan& plan, const std::vector<Variable*>& trainable, ReplicaContext& ctx);
  // Called when a layer's gradients are final; reduces every bucket that became complete.
  void layer_done(Layer& layer);
  // Hands in whatever is left and waits until every bucket is reduced (called after backward).
  void finish();

 private:
  void reduce_ready_buckets();
  const BucketPlan& plan_;
  const std::vector<Variable*>& trainable_;
  ReplicaContext& ctx_;
  std::vector<char> ready_;
  std::size_t next_bucket_ = 0;
  std::vector<std::vector<Tensor>> bucket_tensors_;  // alive until finish(): the reducer reads them
};

}  // namespace kerascpp::detail
