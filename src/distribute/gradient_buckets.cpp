#include "distribute/gradient_buckets.hpp"

#include "distribute/row_gradients.hpp"

namespace kerascpp::detail {

BucketPlan BucketPlan::make(const std::vector<std::shared_ptr<Layer>>& layers, const std::vector<Variable*>& trainable,
                            std::size_t bucket_bytes) {
  BucketPlan plan;
  std::unordered_map<const Variable*, std::size_t> index;
  for (std::size_t i = 0; i < trainable.size(); ++i) index[trainable[i]] = i;
  std::vector<std::size_t> current;
  std::size_t bytes = 0;
  for (auto& layer : layers) {
    auto& mine = plan.layer_variables[layer.get()];
    for (Variable* v : layer->trainable_variables()) {
      std::size_t i = index.at(v);
      if (v->rows_gradient()) {
        plan.row_variables.push_back(i);
        continue;
      }
      mine.push_back(i);
      current.push_back(i);
      bytes += static_cast<std::size_t>(shape_numel(v->shape())) * sizeof(float);
      if (bytes >= bucket_bytes) {
        plan.buckets.push_back(std::move(current));
        current.clear();
        bytes = 0;
      }
    }
  }
  if (!current.empty()) plan.buckets.push_back(std::move(current));
  return plan;
}

BucketReducer::BucketReducer(const BucketPlan& plan, const std::vector<Variable*>& trainable, ReplicaContext& ctx)
    : plan_(plan), trainable_(trainable), ctx_(ctx), ready_(trainable.size(), 0), bucket_tensors_(plan.buckets.size()) {
  for (std::size_t i : plan.row_variables) ready_[i] = 1;  // not bucketed: finish() reduces them
}

void BucketReducer::layer_done(Layer& layer) {
  auto it = plan_.layer_variables.find(&layer);
  if (it == plan_.layer_variables.end()) return;
  int r = ctx_.replica_id;
  for (std::size_t i : it->second) {
    Variable& v = *trainable_[i];
    // A variable that received no gradient (empty shard, unused branch) contributes zeros.
    if (!v.has_grad(r)) {
      v.take_first_grad(r);
      v.grad(r).fill(0.f);
    }
    ready_[i] = 1;
  }
  reduce_ready_buckets();
}

void BucketReducer::reduce_ready_buckets() {
  while (next_bucket_ < plan_.buckets.size()) {
    const auto& bucket = plan_.buckets[next_bucket_];
    for (std::size_t i : bucket)
      if (!ready_[i]) return;
    if (ctx_.cross && ctx_.num_replicas > 1) {
      auto& tensors = bucket_tensors_[next_bucket_];
      tensors.clear();
      for (std::size_t i : bucket) tensors.push_back(trainable_[i]->grad(ctx_.replica_id));
      ctx_.cross->begin_all_reduce_sum(ctx_.replica_id, static_cast<int>(next_bucket_), tensors);
    }
    ++next_bucket_;
  }
}

void BucketReducer::finish() {
  for (std::size_t i = 0; i < trainable_.size(); ++i)
    if (!ready_[i]) {
      Variable& v = *trainable_[i];
      if (!v.has_grad(ctx_.replica_id)) {
        v.take_first_grad(ctx_.replica_id);
        v.grad(ctx_.replica_id).fill(0.f);
      }
      ready_[i] = 1;
    }
  reduce_ready_buckets();
  if (ctx_.cross && ctx_.num_replicas > 1) ctx_.cross->wait_all_reduces(ctx_.replica_id);
  for (std::size_t i : plan_.row_variables) reduce_row_gradient(ctx_, *trainable_[i]);
}

}  // namespace kerascpp::detail
