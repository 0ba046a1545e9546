// ModelImpl: the state behind a Model handle — the graph, the compile configuration and the
// per-replica execution state bound to the strategy.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

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
