// StepTotals: the loss and metric sums of one step or one epoch, gathered from every replica.
// Sums (not means) so that totals over replicas and batches are exact and order-independent in
// meaning; they are always added in replica order so the doubles are bit-for-bit reproducible.
#pragma once
#include <cstddef>
#include <vector>

namespace kerascpp {

struct StepTotals {
  double loss_sum = 0;
  double examples = 0;
  std::vector<double> metric_sums;    // one per metric
  std::vector<double> metric_counts;  // what each metric divides by
  void add(const StepTotals& o);
  void reset(std::size_t metrics);
};

}  // namespace kerascpp
