#include "engine/compiled_state.hpp"

namespace kerascpp::detail {

CompiledState::CompiledState(optimizers::OptimizerRef optimizer, losses::LossRef loss, std::vector<MetricSpec> metrics,
                             distribute::Strategy strategy, std::uint64_t step_seed)
    : optimizer_(std::move(optimizer)),
      loss_(std::move(loss)),
      metrics_(std::move(metrics)),
      strategy_(std::move(strategy)),
      step_seed_(step_seed) {}

std::vector<std::string> CompiledState::metrics_names() const {
  std::vector<std::string> out{"loss"};
  for (const MetricSpec& m : metrics_) out.push_back(m.name);
  return out;
}

StepTotals CompiledState::zero_totals() const {
  StepTotals t;
  for (const MetricSpec& m : metrics_) t.metric_totals.emplace_back(m.metric->num_totals(), 0.0);
  return t;
}

StepTotals CompiledState::shard_totals(Backend& backend, const Tensor& pred, const Tensor& y,
                                       const ShardWeights& weights, Tensor* grad, float grad_scale) const {
  StepTotals t = zero_totals();
  Tensor per_example({pred.dim(0)});
  Tensor no_grad;
  Tensor y_here = y.to(backend.device());
  loss_->compute(backend, pred, y_here, per_example, grad ? *grad : no_grad, grad_scale);
  if (weights.defined()) {
    // d(w·loss)/d(pred) = w·d(loss)/d(pred): the loss's own gradient, row by row.
    backend.scale_rows(per_example, weights.device);
    if (grad) backend.scale_rows(*grad, weights.device);
  }
  t.loss_sum = backend.sum(per_example);
  t.examples = static_cast<double>(pred.dim(0));  // Keras divides by N, not by Σw
  for (std::size_t m = 0; m < metrics_.size(); ++m) {
    t.metric_totals[m] = metrics_[m].weighted && weights.defined()
                             ? weighted_metric_totals(backend, metrics_[m], pred, y_here, weights.host)
                             : metric_totals(backend, metrics_[m], pred, y_here);
  }
  return t;
}

Logs CompiledState::logs_from(const StepTotals& t, const std::string& prefix) const {
  Logs logs;
  logs.set(prefix + "loss", t.examples > 0 ? t.loss_sum / t.examples : 0.0);
  for (std::size_t i = 0; i < metrics_.size(); ++i)
    logs.set(prefix + metrics_[i].name, metrics_[i].metric->result(t.metric_totals[i]));
  return logs;
}

}  // namespace kerascpp::detail
