// Confusion-matrix counts (Precision, Recall, AUC) on the host: one pass builds the histogram
// of backend/confusion.hpp, which then gives every threshold's counts.
#include <algorithm>

#include "backend/confusion.hpp"
#include "backend/cpu/checks.hpp"
#include "backend/cpu/cpu_backend.hpp"
#include "check.hpp"

namespace kerascpp::cpu {

namespace {

// Adds each visited element to positives/negatives[bucket(pred)].
template <class Bucket>
std::vector<double> tally(const Tensor& pred, const Tensor& target, std::int64_t count, std::int64_t stride,
                          std::int64_t offset, std::size_t buckets, const std::vector<std::size_t>& order,
                          Bucket&& bucket) {
  std::vector<std::uint64_t> positives(buckets), negatives(buckets);
  const float* pp = pred.data<float>();
  const float* pt = target.data<float>();
  for (std::int64_t k = 0; k < count; ++k) {
    const std::int64_t i = offset + k * stride;
    const auto b = static_cast<std::size_t>(bucket(pp[i]));
    ++(pt[i] != 0.f ? positives : negatives)[b];
  }
  return confusion::counts_from_histogram(positives, negatives, order);
}

}  // namespace

std::vector<double> CpuBackend::confusion_counts(const Tensor& pred, const Tensor& target,
                                                 const std::vector<float>& thresholds, std::int64_t stride,
                                                 std::int64_t offset) {
  enter();
  const char* op = "confusion_counts";
  require_float(pred, op, "pred");
  require_float(target, op, "target");
  const std::int64_t count = confusion::check_elements(pred, target, stride, offset, op);
  const confusion::SortedThresholds s = confusion::sort_thresholds(thresholds, op);
  return tally(pred, target, count, stride, offset, s.values.size() + 1, s.order, [&](float p) {
    // Thresholds strictly below p (NaN compares false everywhere: 0).
    return std::lower_bound(s.values.begin(), s.values.end(), p) - s.values.begin();
  });
}

std::vector<double> CpuBackend::even_confusion_counts(const Tensor& pred, const Tensor& target, int num_thresholds) {
  enter();
  const char* op = "even_confusion_counts";
  require_float(pred, op, "pred");
  require_float(target, op, "target");
  KERASCPP_CHECK_VALUE(num_thresholds >= 2, "{}: num_thresholds must be >= 2, got {}", op, num_thresholds);
  const std::int64_t count = confusion::check_elements(pred, target, 1, 0, op);
  return tally(pred, target, count, 1, 0, static_cast<std::size_t>(num_thresholds) + 1, {},
               [&](float p) { return confusion::even_bucket(p, num_thresholds); });
}

}  // namespace kerascpp::cpu
