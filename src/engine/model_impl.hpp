// ModelImpl: the state behind a Model handle — the graph, the compile configuration and the
// per-replica execution state bound to the strategy.
#pragma once
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backend/gpu_support.hpp"
#include "distribute/gradient_buckets.hpp"
#include "engine/graph.hpp"
#include "engine/metrics.hpp"
#include "kerascpp/model.hpp"

namespace kerascpp {

// Sums of one step or one epoch, gathered from every replica.
struct StepTotals {
  double loss_sum = 0;
  double examples = 0;
  std::vector<double> metric_sums;    // one per metric
  std::vector<double> metric_counts;  // what each metric divides by
  void add(const StepTotals& o);
  void reset(std::size_t metrics);
};

class ModelImpl {
 public:
  std::string name;
  std::unique_ptr<detail::Graph> graph;   // null until a Sequential model sees its input shape
  bool sequential = false;
  std::vector<LayerRef> sequential_layers;

  // compile()
  bool compiled = false;
  optimizers::OptimizerRef optimizer;
  losses::LossRef loss;
  std::vector<detail::MetricSpec> metrics;
  distribute::Strategy strategy;
  std::uint64_t step_seed = 0;

  // Bound to the strategy (after compile and build).
  bool bound = false;
  std::vector<detail::GraphState> states;  // per replica
  std::vector<Variable*> trainable;
  detail::BucketPlan buckets;

  const detail::Graph& require_graph(const char* what) const;
  // Sequential: build the graph from the first batch's per-example shape and dtype.
  void ensure_built(const Tensor& x);
  // Mirrors the variables on every replica, creates optimizer slots and per-replica state.
  void bind();

  // One replica's part of a training step (shared by fit and custom loops).
  Tensor replica_forward(ReplicaContext& ctx, const Tensor& x, bool training);
  void replica_backward(ReplicaContext& ctx, const Tensor& output_grad);  // gradients all-reduced on return
  void replica_apply(ReplicaContext& ctx);

  // Loss (and, when grad is given, its gradient scaled by grad_scale) and metric sums of one shard.
  StepTotals shard_totals(Backend& backend, const Tensor& pred, const Tensor& y, Tensor* grad, float grad_scale) const;

  // Steps over one global batch; sums are over every replica.
  StepTotals train_step(const Tensor& x, const Tensor& y);
  StepTotals test_step(const Tensor& x, const Tensor& y);
  Tensor predict_step(const Tensor& x);

  Logs logs_from(const StepTotals& totals, const std::string& prefix = "") const;

  // ---- batches on their way to GPU replicas (device_staging.cpp) ----
  bool replicas_on_gpu() const;
  // Starts copying each replica's rows of (x, y) to its GPU; the step that gets this batch uses them.
  void stage_batch(const Tensor& x, const Tensor& y);
  // Replica ctx's rows [begin, end) of `global` on its device: the staged upload when there is one.
  Tensor replica_rows(ReplicaContext& ctx, const Tensor& global, std::int64_t begin, std::int64_t end) const;
  // Forgets the uploads of `x`'s batch once its step has run.
  void unstage(const Tensor& x);
  struct StagedTensor {
    Tensor host;  // held, so no other batch can be given its memory while it is staged
    std::vector<detail::PendingUpload> per_replica;
  };
  struct StagedBatch {
    StagedTensor x, y;
  };
  // The current and the next batch; emptied when the iterator that staged them goes away.
  std::deque<StagedBatch> staged;
  // On GPU replicas: an iterator that stays one batch ahead of `it` and stages that batch;
  // elsewhere `it` itself.
  std::unique_ptr<Dataset::Iterator> with_device_lookahead(std::unique_ptr<Dataset::Iterator> it);

  // Where fit() is, for callbacks that checkpoint mid-epoch (BackupAndRestore).
  struct Position {
    int epoch = 0;
    std::int64_t step = 0;  // batches done in this epoch
    StepTotals totals;      // running sums of this epoch
  };
  Position position;
  // Set by a callback in on_train_begin to resume an interrupted run.
  std::optional<Position> resume_from;
};

}  // namespace kerascpp
