// One global batch through every replica: shard, forward, loss, backward with bucketed
// all-reduce, optimizer update on every mirrored copy. train/test/predict differ only in the
// per-replica body they hand to run_sharded.
#include <fmt/format.h>

#include "check.hpp"
#include "distribute/parameter_server/ps_task.hpp"
#include "distribute/strategy_impl.hpp"
#include "training/model_impl.hpp"

namespace kerascpp {
namespace {

void check_batch(const Inputs& xs, const Tensor& y, const std::string& model) {
  KERASCPP_CHECK_VALUE(!xs.empty(), "Model '{}': the batch has no inputs", model);
  for (const Tensor& x : xs)
    KERASCPP_CHECK_SHAPE(x.defined() && x.rank() != 0,
                         "Model '{}': batches need a leading batch axis; batch the dataset with .batch(n)", model);
  KERASCPP_CHECK_SHAPE(!y.defined() || y.rank() != 0,
                       "Model '{}': batches need a leading batch axis; batch the dataset with .batch(n)", model);
  const std::int64_t rows = xs[0].dim(0);
  for (std::size_t i = 1; i < xs.size(); ++i)
    KERASCPP_CHECK_SHAPE(xs[i].dim(0) == rows,
                         "Model '{}': input {} of the batch has {} rows but input 0 has {}; every input "
                         "must have the same number of rows",
                         model, i, xs[i].dim(0), rows);
  KERASCPP_CHECK_SHAPE(!y.defined() || rows == y.dim(0),
                       "Model '{}': the batch has {} inputs but {} targets; x and y must have the same number "
                       "of rows",
                       model, rows, y.dim(0));
  KERASCPP_CHECK_VALUE(rows != 0, "Model '{}': got an empty batch", model);
}

// The prologue of every step, on the global batch before it is sharded: its shapes and rows, its
// sample weights (checked; undefined when there are none) and the model's input specs.
Tensor check_global_batch(const ModelImpl& m, const Inputs& x, const Tensor& y, const Tensor& sample_weight,
                          const char* what) {
  check_batch(x, y, m.name);
  const Tensor sw =
      sample_weight.defined() ? detail::checked_sample_weight(sample_weight, x[0].dim(0), m.name) : Tensor();
  // Checked on the global batch: a replica's shard would report (4, ...) for the user's (8, ...).
  m.require_graph(what).check_inputs(x);
  return sw;
}

// Replica ctx's rows [begin, end) of every input.
Inputs replica_inputs(const detail::DeviceStaging& staging, ReplicaContext& ctx, const Inputs& xs, std::int64_t begin,
                      std::int64_t end) {
  Inputs out;
  for (const Tensor& x : xs) out.push_back(staging.replica_rows(ctx, x, begin, end));
  return out;
}

// Every worker's per-replica totals, in global replica order (each worker sends its replicas'
// totals flattened as doubles: loss sum, examples, then each metric's totals).
std::vector<StepTotals> gather_over_workers(const distribute::Strategy& strategy, const std::vector<StepTotals>& mine,
                                            const StepTotals& zero) {
  const std::size_t width = zero.flat_size();
  std::vector<double> flat;
  for (const auto& p : mine) {
    // A replica with no rows may hold unsized totals: it contributes zeros.
    std::vector<double> f = p.flat_size() == width ? p.flatten() : zero.flatten();
    flat.insert(flat.end(), f.begin(), f.end());
  }
  std::vector<double> all =
      detail::strategy_impl(strategy)->gather_over_workers(flat, "the step's loss and metric totals");
  std::vector<StepTotals> out(all.size() / width, zero);
  for (std::size_t r = 0; r < out.size(); ++r) out[r].unflatten(all.data() + r * width, width);
  return out;
}

// Replica ctx's rows [begin, end) of the batch's host weights: on its device and on the host.
detail::ShardWeights shard_weights(const detail::DeviceStaging& staging, ReplicaContext& ctx, const Tensor& sw,
                                   std::int64_t begin, std::int64_t end) {
  if (!sw.defined()) return {};
  return {staging.replica_rows(ctx, sw, begin, end), sw.slice(begin, end)};
}

std::uint64_t mix(std::uint64_t a, std::uint64_t b) {
  Rng r(a ^ (b * 0x9E3779B97F4A7C15ull));
  return r.next_u64();
}

// The shard -> run -> sum skeleton of every step: splits the global batch's `rows` over the
// replicas in sync, runs body(ctx, begin, end) on each of this process's (its rows are
// [begin, end), possibly empty) and adds the StepTotals they return in replica order over every
// worker, so the sums are the same doubles every run and on every worker.
// `zero` is the empty sum the partial totals are added to (sized for the metrics).
template <class Body>
StepTotals run_sharded(const distribute::Strategy& strategy, StepTotals zero, std::int64_t rows, Body&& body) {
  auto ranges = strategy.shard_ranges(rows);
  std::vector<StepTotals> partial(static_cast<std::size_t>(detail::strategy_impl(strategy)->num_replicas()));
  strategy.run([&](ReplicaContext& ctx) {
    auto [begin, end] = ranges[static_cast<std::size_t>(ctx.replica_id_in_sync)];
    partial[static_cast<std::size_t>(ctx.replica_id)] = body(ctx, begin, end);
  });
  if (strategy.num_workers() > 1) partial = gather_over_workers(strategy, partial, zero);
  StepTotals total = std::move(zero);
  for (auto& p : partial) total.add(p);  // replica order: deterministic
  return total;
}
}  // namespace

detail::ReplicaBinding& ModelImpl::bound(const char* what) {
  require_graph(what);
  KERASCPP_CHECK_STATE(replicas_.has_value(),
                       "Model '{}': cannot {} before the model is compiled and built; call compile() first", name,
                       what);
  return *replicas_;
}

Tensor ModelImpl::replica_forward(ReplicaContext& ctx, const Inputs& x, bool training) {
  detail::ReplicaBinding& binding = bound("run forward");
  ctx.training = training;
  if (training) {
    require_compiled("train");  // a model bound for predict() before compile() has no optimizer
    // Dropout masks: one stream per (step, replica), so a resumed run replays them exactly.
    std::uint64_t it = static_cast<std::uint64_t>(compiled_->optimizer().iterations());
    ctx.rng = Rng(mix(compiled_->step_seed(), it * 1024u + static_cast<std::uint64_t>(ctx.replica_id_in_sync)));
  }
  return binding.forward(ctx, x);
}

std::function<double()> ModelImpl::replica_backward(ReplicaContext& ctx, const Tensor& output_grad) {
  detail::ReplicaBinding& binding = bound("run backward");
  return binding.backward(ctx, output_grad, require_compiled("run backward").optimizer().loss_scale());
}

void ModelImpl::replica_apply(ReplicaContext& ctx) {
  detail::ReplicaBinding& binding = bound("apply gradients");
  binding.apply(ctx, require_compiled("apply gradients").optimizer());
}

detail::LossMask ModelImpl::loss_mask(ReplicaContext& ctx, bool may_mask, const Tensor& pred, const Tensor& sw,
                                      std::int64_t begin, std::int64_t end, std::int64_t batch_rows) {
  if (!may_mask) return {};
  const Tensor mask = end > begin ? bound("compute the loss").output_mask(ctx) : Tensor();
  return detail::make_loss_mask(ctx, mask, pred, sw.defined() ? sw.slice(begin, end) : Tensor(), batch_rows, name);
}

StepTotals ModelImpl::train_step(const Inputs& x, const Tensor& y, const Tensor& sample_weight) {
  const Tensor sw = check_global_batch(*this, x, y, sample_weight, "train");
  const detail::CompiledState& c = require_compiled("train");
  if (distribute::ParameterServerTask* ps = detail::strategy_impl(c.strategy())->parameter_server()) {
    if (ps->is_coordinator()) {
      // The chief computes nothing: it hands the batch to a worker and takes back its totals.
      const std::string optimizer = optimizers::serialize(c.optimizer());
      KERASCPP_CHECK_VALUE(!optimizer.empty(),
                           "Model '{}': ParameterServerStrategy sends the optimizer to the ps tasks as Keras' "
                           "serialization, and {} has none (a learning rate schedule or an optimizer of your own); "
                           "use a built-in optimizer with a constant learning rate",
                           name, c.optimizer().class_name());
      ps->create_variables(bound("train").trainable(), optimizer);
      const std::vector<double> flat = ps->run_step({x, y, sw});
      StepTotals total = c.zero_totals();
      KERASCPP_CHECK_DEVICE(total.unflatten(flat.data(), flat.size()),
                            "Model '{}': a worker answered a step with {} totals where this model has {}; every task "
                            "must run the same program and model",
                            name, flat.size(), total.flat_size());
      c.optimizer().finish_step();  // the step count (callbacks, dropout streams) follows the ps's
      return total;
    }
    ps->pull(bound("train").trainable());  // a worker: the variables' current values from the ps tasks
  }
  float grad_scale = 1.0f / static_cast<float>(x[0].dim(0));  // the global batch, never the per-replica one
  // LossScaleOptimizer's scale (1 for the others), fixed for the step: it changes in finish_step.
  const float loss_scale = c.optimizer().loss_scale();
  const bool may_mask = bound("train").may_mask_output();
  StepTotals total = run_sharded(
      c.strategy(), c.zero_totals(), x[0].dim(0), [&](ReplicaContext& ctx, std::int64_t begin, std::int64_t end) {
        StepTotals mine = c.zero_totals();
        ctx.backend->mark_phase("forward");
        Inputs xs = replica_inputs(staging, ctx, x, begin, end);
        Tensor ys = staging.replica_rows(ctx, y, begin, end);
        Tensor pred = replica_forward(ctx, xs, true);
        Tensor grad(pred.shape());
        ctx.backend->mark_phase("loss");
        const detail::LossMask mask = loss_mask(ctx, may_mask, pred, sw, begin, end, x[0].dim(0));
        // An empty shard still runs backward and apply: the all-reduce needs every replica.
        if (end > begin)
          mine = c.shard_totals(*ctx.backend, pred, ys, shard_weights(staging, ctx, sw, begin, end), &grad, grad_scale,
                                &mask, loss_scale);
        ctx.backend->mark_phase("backward");
        const std::function<double()> penalty = replica_backward(ctx, grad);
        ctx.backend->mark_phase("apply");
        replica_apply(ctx);
        ctx.backend->mark_phase("totals");
        // Keras' loss = mean example loss + Σ model.losses: the penalty counts once per example.
        mine.loss_sum += penalty() * static_cast<double>(end - begin);
        ctx.backend->mark_phase("after");
        return mine;
      });
  staging.unstage(x[0]);
  c.optimizer().finish_step();
  return total;
}

StepTotals ModelImpl::test_step(const Inputs& x, const Tensor& y, const Tensor& sample_weight) {
  const Tensor sw = check_global_batch(*this, x, y, sample_weight, "evaluate");
  const detail::CompiledState& c = require_compiled("evaluate");
  const bool may_mask = bound("evaluate").may_mask_output();
  StepTotals total = run_sharded(
      c.strategy(), c.zero_totals(), x[0].dim(0), [&](ReplicaContext& ctx, std::int64_t begin, std::int64_t end) {
        ctx.training = false;
        if (end == begin) {
          // Still counts its (zero) masked steps with the others: the count is all-reduced.
          if (may_mask) loss_mask(ctx, may_mask, Tensor(), sw, begin, end, x[0].dim(0));
          return c.zero_totals();
        }
        Inputs xs = replica_inputs(staging, ctx, x, begin, end);
        Tensor ys = staging.replica_rows(ctx, y, begin, end);
        Tensor pred = replica_forward(ctx, xs, false);
        const detail::LossMask mask = loss_mask(ctx, may_mask, pred, sw, begin, end, x[0].dim(0));
        // Evaluation needs the loss only.
        StepTotals mine =
            c.shard_totals(*ctx.backend, pred, ys, shard_weights(staging, ctx, sw, begin, end), nullptr, 0.f, &mask);
        mine.loss_sum += bound("evaluate").regularization_loss(ctx) * static_cast<double>(end - begin);
        return mine;
      });
  staging.unstage(x[0]);
  return total;
}

Tensor ModelImpl::predict_step(const Inputs& x, bool recorded) {
  check_global_batch(*this, x, Tensor(), Tensor(), "predict");
  const detail::Graph& g = require_graph("predict");
  Shape out_shape = g.outputs().at(0).shape();
  out_shape.insert(out_shape.begin(), x[0].dim(0));
  // Predictions are returned on the host. A multi-worker job computes each worker's rows there
  // and sums the (otherwise zero) outputs over the workers, so every worker returns all rows.
  const bool workers = strategy().num_workers() > 1;
  Tensor out =
      workers ? Tensor::zeros(out_shape, DType::float32, Device{}) : Tensor(out_shape, DType::float32, Device{});
  // Before compile(): the default strategy (one replica on cpu:0), bound by prepare_inference.
  const StepTotals none;  // predictions have no loss or metrics
  run_sharded(strategy(), none, x[0].dim(0), [&](ReplicaContext& ctx, std::int64_t begin, std::int64_t end) {
    ctx.training = false;
    if (end > begin) {
      Tensor dst = out.slice(begin, end);  // each replica fills its own rows: outputs stay in dataset order
      // A single GPU replica replays its recorded forward from the second batch of a shape on.
      if (recorded && !workers && bound("predict").replay_predict(ctx, x, begin, end, dst)) return none;
      ctx.backend->mark_phase("predict");  // KERASCPP_GPU_PHASES: the inputs' upload
      Inputs xs = replica_inputs(staging, ctx, x, begin, end);
      ctx.backend->mark_phase("pred forward");
      Tensor pred = replica_forward(ctx, xs, false);
      ctx.backend->mark_phase("pred output");
      dst.copy_from(pred);
      ctx.backend->mark_phase("pred after");  // the caller's own time until the next predict
    }
    return none;
  });
  staging.unstage(x[0]);
  if (workers) detail::strategy_impl(strategy())->sum_over_workers(out, "the predictions of a batch");
  return out;
}

}  // namespace kerascpp
