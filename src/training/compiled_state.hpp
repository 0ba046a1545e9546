// CompiledState: what compile() fixed — optimizer, loss, metrics, strategy and the seed of the
// training steps' random streams — and the arithmetic that depends only on them: one shard's
// loss and metric sums, and the logs made from summed totals.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "kerascpp/distribute/strategy.hpp"
#include "kerascpp/training/logs.hpp"
#include "kerascpp/training/losses.hpp"
#include "kerascpp/training/optimizers.hpp"
#include "training/loss_mask.hpp"
#include "training/metrics.hpp"
#include "training/sample_weights.hpp"
#include "training/step_totals.hpp"

namespace kerascpp::detail {

class CompiledState {
 public:
  CompiledState(optimizers::OptimizerRef optimizer, losses::LossRef loss, std::vector<MetricSpec> metrics,
                distribute::Strategy strategy, std::uint64_t step_seed);

  optimizers::Optimizer& optimizer() const { return *optimizer_.get(); }
  const distribute::Strategy& strategy() const { return strategy_; }
  // Seeds the per-(step, replica) random streams (dropout masks), so a resumed run replays them.
  std::uint64_t step_seed() const { return step_seed_; }

  std::size_t metric_count() const { return metrics_.size(); }
  // The names the metrics (weighted: the weighted_metrics) were compiled with, as Keras lists
  // them in a compile_config.
  std::vector<std::string> metric_names(bool weighted) const;
  // Keras' metrics_names: "loss", then each metric's log key.
  std::vector<std::string> metrics_names() const;
  // Totals with every sum zero, sized for the metrics.
  StepTotals zero_totals() const;

  // Loss (and, when grad is given, its gradient scaled by grad_scale·loss_scale) and metric sums
  // of one shard. With sample weights each example's loss and gradient are scaled by its weight
  // (Keras' sum_over_batch_size: Σ w·loss / N) and the weighted metrics are weighted means; the
  // other metrics ignore the weights, as in Keras. With an active `mask` (loss_mask.hpp) the loss
  // and metrics go by unmasked rows instead, and grad_scale is the mask's. loss_scale
  // (LossScaleOptimizer's) scales the gradient only: the loss sums stay unscaled for the logs.
  StepTotals shard_totals(Backend& backend, const Tensor& pred, const Tensor& y, const ShardWeights& weights,
                          Tensor* grad, float grad_scale, const LossMask* mask = nullptr, float loss_scale = 1.f) const;
  const losses::Loss& loss() const { return *loss_.get(); }
  // Means of summed totals, keyed "loss" and each metric's name, each with `prefix` ("val_").
  Logs logs_from(const StepTotals& totals, const std::string& prefix = "") const;

 private:
  StepTotals masked_shard_totals(Backend& backend, const Tensor& pred, const Tensor& y, const LossMask& mask,
                                 bool weighted, Tensor* grad, float loss_scale) const;

  optimizers::OptimizerRef optimizer_;
  losses::LossRef loss_;
  std::vector<MetricSpec> metrics_;
  distribute::Strategy strategy_;
  std::uint64_t step_seed_;
};

}  // namespace kerascpp::detail
