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
  // One entry per metric: its totals (Metric::num_totals() values; (sum, count) for a mean,
  // the confusion-matrix counts for Precision, Recall and AUC).
  std::vector<std::vector<double>> metric_totals;
  void add(const StepTotals& o);
  // Zeros every sum, keeping the metrics' sizes.
  void zero();
  // Flattened as (loss sum, examples, each metric's totals in order): what crosses workers and
  // what a mid-epoch checkpoint stores. unflatten reads it back into totals sized like *this
  // and returns false when `flat` has another length.
  std::vector<double> flatten() const;
  bool unflatten(const double* flat, std::size_t n);
  std::size_t flat_size() const;
};

}  // namespace kerascpp
