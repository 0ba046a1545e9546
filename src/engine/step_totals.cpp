#include "engine/step_totals.hpp"

namespace kerascpp {

void StepTotals::add(const StepTotals& o) {
  loss_sum += o.loss_sum;
  examples += o.examples;
  if (metric_sums.size() < o.metric_sums.size()) reset(o.metric_sums.size());
  for (std::size_t i = 0; i < o.metric_sums.size(); ++i) {
    metric_sums[i] += o.metric_sums[i];
    metric_counts[i] += o.metric_counts[i];
  }
}

void StepTotals::reset(std::size_t metrics) {
  loss_sum = examples = 0;
  metric_sums.assign(metrics, 0);
  metric_counts.assign(metrics, 0);
}

}  // namespace kerascpp
