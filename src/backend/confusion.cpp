#include "backend/confusion.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "backend/op_shapes.hpp"
#include "check.hpp"

namespace kerascpp::confusion {

std::int64_t check_elements(const Tensor& pred, const Tensor& target, std::int64_t stride, std::int64_t offset,
                            const char* op) {
  op_shapes::check_target_shape(target, pred, op);
  KERASCPP_CHECK_VALUE(stride >= 1 && offset >= 0 && offset < stride,
                       "{}: stride {} and offset {} must satisfy stride >= 1 and 0 <= offset < stride", op, stride,
                       offset);
  KERASCPP_CHECK_SHAPE(
      pred.numel() % stride == 0,
      "{}: pred has shape {} ({} values), not a multiple of stride {}; pass the size of the class axis", op,
      shape_str(pred.shape()), pred.numel(), stride);
  return pred.numel() / stride;
}

SortedThresholds sort_thresholds(const std::vector<float>& thresholds, const char* op) {
  KERASCPP_CHECK_VALUE(!thresholds.empty(), "{}: no thresholds given; pass at least one", op);
  for (float t : thresholds)
    KERASCPP_CHECK_VALUE(!std::isnan(t), "{}: a threshold is NaN; thresholds must be numbers", op);
  SortedThresholds s;
  s.order.resize(thresholds.size());
  std::iota(s.order.begin(), s.order.end(), std::size_t{0});
  std::stable_sort(s.order.begin(), s.order.end(),
                   [&](std::size_t a, std::size_t b) { return thresholds[a] < thresholds[b]; });
  for (std::size_t i : s.order) s.values.push_back(thresholds[i]);
  return s;
}

std::vector<double> counts_from_histogram(const std::vector<std::uint64_t>& positives,
                                          const std::vector<std::uint64_t>& negatives,
                                          const std::vector<std::size_t>& order) {
  const std::size_t t = positives.size() - 1;
  std::uint64_t all_pos = 0, all_neg = 0;
  for (std::size_t b = 0; b <= t; ++b) {
    all_pos += positives[b];
    all_neg += negatives[b];
  }
  std::vector<double> out(4 * t);
  // Walking up the sorted thresholds, bucket j's elements stop exceeding threshold j.
  std::uint64_t below_pos = 0, below_neg = 0;  // elements in buckets <= j: negative at threshold j
  for (std::size_t j = 0; j < t; ++j) {
    below_pos += positives[j];
    below_neg += negatives[j];
    const std::size_t i = order.empty() ? j : order[j];
    out[i] = static_cast<double>(all_pos - below_pos);      // TP
    out[t + i] = static_cast<double>(all_neg - below_neg);  // FP
    out[2 * t + i] = static_cast<double>(below_neg);        // TN
    out[3 * t + i] = static_cast<double>(below_pos);        // FN
  }
  return out;
}

}  // namespace kerascpp::confusion
