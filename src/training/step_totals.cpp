#include "training/step_totals.hpp"

#include <algorithm>

namespace kerascpp {

void StepTotals::add(const StepTotals& o) {
  loss_sum += o.loss_sum;
  examples += o.examples;
  if (metric_totals.size() < o.metric_totals.size()) metric_totals.resize(o.metric_totals.size());
  for (std::size_t i = 0; i < o.metric_totals.size(); ++i) {
    auto& mine = metric_totals[i];
    const auto& theirs = o.metric_totals[i];
    if (mine.size() < theirs.size()) mine.resize(theirs.size(), 0.0);
    for (std::size_t k = 0; k < theirs.size(); ++k) mine[k] += theirs[k];
  }
}

void StepTotals::zero() {
  loss_sum = examples = 0;
  for (auto& m : metric_totals) std::fill(m.begin(), m.end(), 0.0);
}

std::size_t StepTotals::flat_size() const {
  std::size_t n = 2;
  for (const auto& m : metric_totals) n += m.size();
  return n;
}

std::vector<double> StepTotals::flatten() const {
  std::vector<double> flat{loss_sum, examples};
  for (const auto& m : metric_totals) flat.insert(flat.end(), m.begin(), m.end());
  return flat;
}

bool StepTotals::unflatten(const double* flat, std::size_t n) {
  if (n != flat_size()) return false;
  loss_sum = flat[0];
  examples = flat[1];
  std::size_t at = 2;
  for (auto& m : metric_totals)
    for (double& v : m) v = flat[at++];
  return true;
}

}  // namespace kerascpp
