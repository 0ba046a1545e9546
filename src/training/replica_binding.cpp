#include "training/replica_binding.hpp"

#include "distribute/parameter_server/ps_task.hpp"
#include "distribute/strategy_impl.hpp"
#include "training/weight_penalties.hpp"

namespace kerascpp::detail {

ReplicaBinding::ReplicaBinding(const Graph& graph, const distribute::Strategy& strategy,
                               optimizers::Optimizer* optimizer)
    : graph_(graph) {
  int replicas = detail::strategy_impl(strategy)->num_replicas();  // this process's replicas hold the mirrors
  central_ = detail::strategy_impl(strategy)->central_variables();
  ps_ = detail::strategy_impl(strategy)->parameter_server();
  std::vector<Device> devices;
  for (int r = 0; r < replicas; ++r) devices.push_back(detail::strategy_impl(strategy)->context(r).backend->device());
  for (auto& layer : graph.layers()) {
    for (Variable* v : layer->variables()) v->mirror(devices);
    for (Variable* v : layer->trainable_variables()) {
      v->set_rows_gradient(v->sparse_capable());  // the reducer below takes its gradient as rows
      // Non-trainable variables (BatchNormalization's moving statistics) stay mirrored even under
      // central storage: each replica updates its own from its own batch in forward, concurrently.
      // Central storage: every replica's value() becomes a handle on copy 0's storage (the host
      // copy: CPU replicas all hold host memory), so the variable exists once; each replica keeps
      // its own gradient buffer.
      if (central_)
        for (int r = 1; r < replicas; ++r) v->value(r) = v->value(0);
      trainable_.push_back(v);
    }
  }
  states_.assign(static_cast<std::size_t>(replicas), {});
  // Central storage: one set of slots, beside the one copy of each variable.
  if (optimizer) optimizer->build(trainable_, central_ ? 1 : replicas);
  std::vector<std::shared_ptr<Layer>> backward_order(graph.layers().rbegin(), graph.layers().rend());
  buckets_ = BucketPlan::make(backward_order, trainable_, detail::strategy_impl(strategy)->bucket_bytes());
}

Tensor ReplicaBinding::forward(ReplicaContext& ctx, const std::vector<Tensor>& xs) {
  if (xs.at(0).dim(0) == 0) {
    graph_.forward_empty(ctx);  // no examples, but collectives (synchronized BN) still need this replica
    Shape s = graph_.outputs().at(0).shape();
    s.insert(s.begin(), 0);
    return Tensor(s);
  }
  // A GPU replica copies its shard over here; on the host this is the shard itself, no copy.
  std::vector<Tensor> on_device;
  for (const Tensor& x : xs) on_device.push_back(x.to(ctx.backend->device()));
  return graph_.forward(ctx, on_device, state(ctx)).at(0);
}

bool ReplicaBinding::replay_predict(ReplicaContext& ctx, const std::vector<Tensor>& x, std::int64_t begin,
                                    std::int64_t end, Tensor& dst) {
  if (states_.size() != 1) return false;
  return predict_recordings_.run(
      ctx, [&](const std::vector<Tensor>& xs) { return graph_.forward(ctx, xs, state(ctx)).at(0); }, x, begin, end,
      dst);
}

std::function<double()> ReplicaBinding::backward(ReplicaContext& ctx, const Tensor& output_grad, float loss_scale) {
  for (Variable* v : trainable_) v->reset_grads(ctx.replica_id);
  BucketReducer reducer(buckets_, trainable_, ctx);
  auto on_done = [&](Layer& l) { reducer.layer_done(l); };
  if (output_grad.dim(0) == 0) graph_.backward_empty(ctx, on_done);
  else graph_.backward(ctx, {output_grad.to(ctx.backend->device())}, state(ctx), on_done);
  reducer.finish();
  return weight_penalties(*ctx.backend, ctx.replica_id, trainable_, true, loss_scale);
}

double ReplicaBinding::regularization_loss(ReplicaContext& ctx) const {
  return weight_penalties(*ctx.backend, ctx.replica_id, trainable_, false)();
}

void ReplicaBinding::apply(ReplicaContext& ctx, optimizers::Optimizer& optimizer) {
  if (ps_) {
    ps_->push(trainable_, ctx.replica_id);  // the ps tasks apply the optimizer to them
    return;
  }
  if (!central_) {
    apply_once(ctx, optimizer);
    return;
  }
  // Central storage: every replica still reads the shared copies until it has computed its
  // gradients and penalties, so replica 0 updates them only once all have arrived here, and no
  // replica leaves before the update is done (a custom loop may read the weights next). The
  // replicas' collective is the barrier: a one-element all-reduce that every replica joins.
  auto barrier = [&] {
    if (!ctx.cross) return;
    std::vector<Tensor> token{Tensor::zeros({1}, DType::float32, ctx.backend->device())};
    ctx.cross->all_reduce_sum(ctx.replica_id, token);
  };
  barrier();
  if (ctx.replica_id == 0) {
    // Replica 0's gradients are the sum over every replica (the all-reduce left it on all), and
    // it alone holds the optimizer's slots: it checks and clips them on its own (no collective).
    ReplicaContext alone = ctx;
    alone.cross = nullptr;
    apply_once(alone, optimizer);
  }
  barrier();
}

void ReplicaBinding::apply_once(ReplicaContext& ctx, optimizers::Optimizer& optimizer) {
  if (!optimizer.prepare_gradients(ctx, trainable_)) return;
  for (std::size_t i = 0; i < trainable_.size(); ++i) optimizer.apply(*ctx.backend, ctx.replica_id, i, *trainable_[i]);
  apply_constraints(*ctx.backend, ctx.replica_id, trainable_);
}

}  // namespace kerascpp::detail
