// One global batch through every replica: shard, forward, loss, backward with bucketed
// all-reduce, optimizer update on every mirrored copy.
#include <fmt/format.h>

#include "engine/model_impl.hpp"

namespace kerascpp {
namespace {

void check_batch(const Tensor& x, const Tensor& y, const std::string& model) {
  if (x.rank() == 0 || (y.defined() && y.rank() == 0))
    throw ShapeError(fmt::format("Model '{}': batches need a leading batch axis; batch the dataset with .batch(n)", model));
  if (y.defined() && x.dim(0) != y.dim(0))
    throw ShapeError(fmt::format("Model '{}': the batch has {} inputs but {} targets; x and y must have the same number "
                            "of rows",
                            model, x.dim(0), y.dim(0)));
  if (x.dim(0) == 0) throw ValueError(fmt::format("Model '{}': got an empty batch", model));
}

std::uint64_t mix(std::uint64_t a, std::uint64_t b) {
  Rng r(a ^ (b * 0x9E3779B97F4A7C15ull));
  return r.next_u64();
}

}  // namespace

Tensor ModelImpl::replica_forward(ReplicaContext& ctx, const Tensor& x, bool training) {
  const detail::Graph& g = require_graph("run forward");
  ctx.training = training;
  if (training) {
    // Dropout masks: one stream per (step, replica), so a resumed run replays them exactly.
    std::uint64_t it = static_cast<std::uint64_t>(optimizer->iterations());
    ctx.rng = Rng(mix(step_seed, it * 1024u + static_cast<std::uint64_t>(ctx.replica_id)));
  }
  if (x.dim(0) == 0) {
    g.forward_empty(ctx);  // no examples, but collectives (synchronized BN) still need this replica
    Shape s = g.outputs().at(0).shape();
    s.insert(s.begin(), 0);
    return Tensor(s);
  }
  // A GPU replica copies its shard over here; on the host this is the shard itself, no copy.
  return g.forward(ctx, {x.to(ctx.backend->device())}, states.at(static_cast<std::size_t>(ctx.replica_id))).at(0);
}

void ModelImpl::replica_backward(ReplicaContext& ctx, const Tensor& output_grad) {
  const detail::Graph& g = require_graph("run backward");
  for (Variable* v : trainable) v->reset_grads(ctx.replica_id);
  detail::BucketReducer reducer(buckets, trainable, ctx);
  auto on_done = [&](Layer& l) { reducer.layer_done(l); };
  if (output_grad.dim(0) == 0) g.backward_empty(ctx, on_done);
  else g.backward(ctx, {output_grad.to(ctx.backend->device())}, states.at(static_cast<std::size_t>(ctx.replica_id)),
                  on_done);
  reducer.finish();
}

void ModelImpl::replica_apply(ReplicaContext& ctx) {
  for (std::size_t i = 0; i < trainable.size(); ++i) optimizer->apply(*ctx.backend, ctx.replica_id, i, *trainable[i]);
}

StepTotals ModelImpl::shard_totals(Backend& backend, const Tensor& pred, const Tensor& y, Tensor* grad,
                                   float grad_scale) const {
  StepTotals t;
  t.reset(metrics.size());
  Tensor per_example({pred.dim(0)});
  Tensor no_grad;
  Tensor y_here = y.to(backend.device());
  loss->compute(backend, pred, y_here, per_example, grad ? *grad : no_grad, grad_scale);
  t.loss_sum = backend.sum(per_example);
  t.examples = static_cast<double>(pred.dim(0));
  for (std::size_t m = 0; m < metrics.size(); ++m) {
    auto [s, c] = detail::metric_sums(backend, metrics[m], pred, y_here);
    t.metric_sums[m] = s;
    t.metric_counts[m] = c;
  }
  return t;
}

StepTotals ModelImpl::train_step(const Tensor& x, const Tensor& y) {
  check_batch(x, y, name);
  // Checked on the global batch: a replica's shard would report (4, ...) for the user's (8, ...).
  require_graph("train").check_inputs({x});
  int n = strategy.num_replicas_in_sync();
  auto ranges = strategy.shard_ranges(x.dim(0));
  float grad_scale = 1.0f / static_cast<float>(x.dim(0));  // the global batch, never the per-replica one
  std::vector<StepTotals> partial(static_cast<std::size_t>(n));
  strategy.run([&](ReplicaContext& ctx) {
    int r = ctx.replica_id;
    auto [begin, end] = ranges[static_cast<std::size_t>(r)];
    StepTotals& mine = partial[static_cast<std::size_t>(r)];
    mine.reset(metrics.size());
    Tensor xs = replica_rows(ctx, x, begin, end), ys = replica_rows(ctx, y, begin, end);
    Tensor pred = replica_forward(ctx, xs, true);
    Tensor grad(pred.shape());
    if (end > begin) {
      mine = shard_totals(*ctx.backend, pred, ys, &grad, grad_scale);
    }
    replica_backward(ctx, grad);
    replica_apply(ctx);
  });
  unstage(x);
  optimizer->finish_step();
  StepTotals total;
  total.reset(metrics.size());
  for (auto& p : partial) total.add(p);  // replica order: deterministic
  return total;
}

StepTotals ModelImpl::test_step(const Tensor& x, const Tensor& y) {
  check_batch(x, y, name);
  const detail::Graph& g = require_graph("evaluate");
  g.check_inputs({x});  // on the global batch, before sharding
  int n = strategy.num_replicas_in_sync();
  auto ranges = strategy.shard_ranges(x.dim(0));
  std::vector<StepTotals> partial(static_cast<std::size_t>(n));
  strategy.run([&](ReplicaContext& ctx) {
    int r = ctx.replica_id;
    auto [begin, end] = ranges[static_cast<std::size_t>(r)];
    ctx.training = false;
    StepTotals& mine = partial[static_cast<std::size_t>(r)];
    mine.reset(metrics.size());
    if (end == begin) return;
    Tensor xs = replica_rows(ctx, x, begin, end), ys = replica_rows(ctx, y, begin, end);
    Tensor pred = g.forward(ctx, {xs}, states[static_cast<std::size_t>(r)]).at(0);
    mine = shard_totals(*ctx.backend, pred, ys, nullptr, 0.f);  // evaluation needs the loss only
  });
  unstage(x);
  StepTotals total;
  total.reset(metrics.size());
  for (auto& p : partial) total.add(p);
  return total;
}

Tensor ModelImpl::predict_step(const Tensor& x) {
  check_batch(x, Tensor(), name);
  const detail::Graph& g = require_graph("predict");
  g.check_inputs({x});  // on the global batch, before sharding
  auto ranges = strategy.shard_ranges(x.dim(0));
  Shape out_shape = g.outputs().at(0).shape();
  out_shape.insert(out_shape.begin(), x.dim(0));
  Tensor out(out_shape, DType::float32, Device{});  // predictions are returned on the host
  strategy.run([&](ReplicaContext& ctx) {
    int r = ctx.replica_id;
    auto [begin, end] = ranges[static_cast<std::size_t>(r)];
    ctx.training = false;
    if (end == begin) return;
    Tensor pred = g.forward(ctx, {replica_rows(ctx, x, begin, end)}, states[static_cast<std::size_t>(r)]).at(0);
    Tensor dst = out.slice(begin, end);
    dst.copy_from(pred);  // each replica fills its own rows: outputs stay in dataset order
  });
  unstage(x);
  return out;
}

}  // namespace kerascpp
