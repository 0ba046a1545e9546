// ReplicaBinding: a built, compiled model bound to its strategy's replicas — the variables
// mirrored on every replica device, the optimizer's slots, each replica's activations and layer
// state, and the plan for all-reducing gradients in buckets. It runs one replica's part of a
// step; the model makes a new one whenever compile() changes the strategy.
#pragma once
#include <functional>
#include <vector>

#include "core/graph.hpp"
#include "distribute/gradient_buckets.hpp"
#include "distribute/strategy_impl.hpp"
#include "training/compiled_state.hpp"
#include "training/predict_recordings.hpp"

namespace kerascpp::detail {

class ReplicaBinding {
 public:
  // Mirrors every variable of `graph` on the strategy's devices, builds the optimizer's slots for
  // the trainable ones (none without an optimizer: a model predicting before compile()) and plans
  // the gradient buckets. Keeps a reference to `graph`.
  ReplicaBinding(const Graph& graph, const distribute::Strategy& strategy, optimizers::Optimizer* optimizer);

  // Replica ctx's forward pass over its shard `x` (copied to its device when it is elsewhere),
  // keeping what backward needs. An empty shard still joins the collectives (synchronized BN).
  Tensor forward(ReplicaContext& ctx, const std::vector<Tensor>& xs);
  // The Keras mask of replica ctx's output after a forward() of a non-empty shard (undefined: none).
  Tensor output_mask(const ReplicaContext& ctx) const {
    return graph_.output_masks(states_.at(static_cast<std::size_t>(ctx.replica_id))).at(0);
  }
  // Whether the output may carry a mask: the steps then weight the loss by it (loss_mask.hpp).
  bool may_mask_output() const { return graph_.creates_masks(); }
  // Backward from the loss gradient; every trainable gradient is all-reduced on return, and the
  // regularizers' gradients times `loss_scale` (the optimizer's, as output_grad's) are added to
  // it (once, after the all-reduce). Returns the regularization loss (Σ penalties of the weights
  // before this step's update, unscaled) as a function to call after apply(): a GPU then waits
  // for it with the update already queued.
  std::function<double()> backward(ReplicaContext& ctx, const Tensor& output_grad, float loss_scale);
  // The regularization loss of the current weights, without gradients (evaluation).
  double regularization_loss(ReplicaContext& ctx) const;
  // The optimizer update of this replica's copy of every trainable variable, then the
  // variables' constraints (Keras applies them after the update). Neither when the optimizer
  // skips the step (LossScaleOptimizer on non-finite gradients: every replica skips it).
  // Under central storage (StrategyImpl::central_variables) every replica calls it and waits for
  // the others; replica 0 alone updates the one copy, and all return once it is updated.
  void apply(ReplicaContext& ctx, optimizers::Optimizer& optimizer);

  const std::vector<Variable*>& trainable() const { return trainable_; }

  // predict's forward of replica ctx over rows [begin, end) of the host inputs `x`, its output
  // copied into `dst`, replayed from a recording (predict_recordings.hpp) on a single replica
  // whose backend records; false when this batch did not use one (the caller runs forward()).
  bool replay_predict(ReplicaContext& ctx, const std::vector<Tensor>& x, std::int64_t begin, std::int64_t end,
                      Tensor& dst);

 private:
  GraphState& state(const ReplicaContext& ctx) { return states_.at(static_cast<std::size_t>(ctx.replica_id)); }
  const Graph& graph_;
  std::vector<GraphState> states_;  // per replica
  void apply_once(ReplicaContext& ctx, optimizers::Optimizer& optimizer);
  std::vector<Variable*> trainable_;
  bool central_ = false;                           // trainable variables kept once on the host (CentralStorageStrategy)
  distribute::ParameterServerTask* ps_ = nullptr;  // ParameterServerStrategy: gradients go to the ps tasks
  BucketPlan buckets_;
  PredictRecordings predict_recordings_;  // a single replica's
};

}  // namespace kerascpp::detail
