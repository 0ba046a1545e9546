// ModelImpl: the state behind a Model handle, one small type per concern:
//   the architecture      name, graph (null until a Sequential model sees its input shape)
//   compiled_             what compile() fixed (compiled_state.hpp)
//   replicas_             the variables bound to the strategy's replicas (replica_binding.hpp)
//   staging               batches on their way to GPU replicas (device_staging.hpp)
//   position              where fit() is, for BackupAndRestore (training_position.hpp)
// and the steps that run one global batch through them (steps.cpp). Internal: the public Model
// never exposes it; callbacks reach the training position through detail::training_position().
#pragma once
#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/graph.hpp"
#include "kerascpp/training/model.hpp"
#include "training/compiled_state.hpp"
#include "training/device_staging.hpp"
#include "training/replica_binding.hpp"
#include "training/step_totals.hpp"
#include "training/training_position.hpp"

namespace kerascpp {

// A batch's input tensors, one per model Input, in the model's input order.
using Inputs = std::vector<Tensor>;

class ModelImpl {
 public:
  // ---- the architecture ----
  std::string name;
  std::unique_ptr<detail::Graph> graph;  // null until a Sequential model sees its input shape
  bool sequential = false;
  std::vector<LayerRef> sequential_layers;

  const detail::Graph& require_graph(const char* what) const;
  // Sequential: build the graph from the first batch's per-example shape and dtype.
  void ensure_built(const Inputs& x);
  // How many input tensors a batch carries: the model's Inputs (1 for an unbuilt Sequential).
  std::size_t num_inputs() const { return graph ? graph->inputs().size() : 1; }

  // ---- compile() ----
  bool is_compiled() const { return compiled_.has_value(); }
  // StateError naming `what` ("fit") when compile() has not run.
  const detail::CompiledState& require_compiled(const char* what) const;
  // compile(): replaces the compiled state and rebinds the replicas.
  void compile(detail::CompiledState state);
  // The compiled strategy; before compile(), Keras' default (one replica on cpu:0), made when asked.
  const distribute::Strategy& strategy() const;

  // ---- bound to the strategy (after compile and build) ----
  // Mirrors the variables on every replica, creates optimizer slots and per-replica state; a
  // no-op until the model is both built and compiled, and once bound.
  void bind();
  // What every batch of fit/evaluate/predict and the *_on_batch calls do first: build a
  // Sequential model from the batch when it has no graph yet, and bind.
  void prepare(const Inputs& x);
  // predict before compile() (Keras allows it): prepare, binding an uncompiled model to the
  // default strategy without optimizer slots; compile() replaces that binding.
  void prepare_inference(const Inputs& x);

  // ---- stopping (Model::request_stop) ----
  std::atomic<bool> stop_flag{false};  // set from any thread or a signal handler
  int call_depth = 0;                  // fit/evaluate/predict running (validation nests)

  detail::DeviceStaging staging;
  detail::TrainingPosition position;

  // One replica's part of a training step (shared by fit and custom loops).
  Tensor replica_forward(ReplicaContext& ctx, const Inputs& x, bool training);
  // Gradients all-reduced on return (+ the regularizers'); the regularization loss comes from the
  // returned function, to call after replica_apply (ReplicaBinding::backward).
  std::function<double()> replica_backward(ReplicaContext& ctx, const Tensor& output_grad);
  void replica_apply(ReplicaContext& ctx);
  // Replica ctx's share of the loss mask (loss_mask.hpp) of a step over a global batch of
  // `batch_rows`, its rows [begin, end); inactive when the output cannot carry a mask. Every
  // replica calls it when may_mask (the mask count is all-reduced).
  detail::LossMask loss_mask(ReplicaContext& ctx, bool may_mask, const Tensor& pred, const Tensor& sample_weight,
                             std::int64_t begin, std::int64_t end, std::int64_t batch_rows);

  // Steps over one global batch; sums are over every replica.
  // sample_weight: float32 [N] on the host (checked_sample_weight), or undefined for none.
  StepTotals train_step(const Inputs& x, const Tensor& y, const Tensor& sample_weight = Tensor());
  StepTotals test_step(const Inputs& x, const Tensor& y, const Tensor& sample_weight = Tensor());
  // `recorded`: predict_on_batch's, which a single GPU replica replays from a recording
  // (predict_recordings.hpp); predict()'s batches, staged one ahead, run op by op.
  Tensor predict_step(const Inputs& x, bool recorded = false);
  // The trainable variables the replicas are bound to, in the order the optimizer's slots and the
  // ParameterServerStrategy's shard placement follow.
  const std::vector<Variable*>& bound_trainable() { return bound("train").trainable(); }

 private:
  detail::ReplicaBinding& bound(const char* what);

  std::optional<detail::CompiledState> compiled_;
  std::optional<detail::ReplicaBinding> replicas_;
  mutable std::optional<distribute::Strategy> default_strategy_;
};

}  // namespace kerascpp
