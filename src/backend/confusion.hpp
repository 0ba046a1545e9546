// The device-independent half of the confusion-matrix ops (Backend::confusion_counts and
// even_confusion_counts): argument checks, and turning a histogram into per-threshold counts.
//
// Every backend reduces its elements to one histogram: bucket b in [0, T] holds the positives
// (and, apart, the negatives) that exceed exactly b of the T ascending thresholds, so they are
// predicted positive at the first b thresholds and negative at the rest. Counts per threshold
// are then suffix/prefix sums of the histogram: O(elements·log T + T) instead of O(elements·T),
// and exact, since every tally is an integer.
#pragma once
#include <cmath>
#include <cstdint>
#include <vector>

#include "kerascpp/tensor/tensor.hpp"

namespace kerascpp::confusion {

// pred/target float32 of equal numel (trailing 1s aside, as the losses allow), stride >= 1,
// 0 <= offset < stride, stride divides numel. Throws ShapeError/ValueError naming `op`.
// Returns the number of elements visited (numel / stride).
std::int64_t check_elements(const Tensor& pred, const Tensor& target, std::int64_t stride, std::int64_t offset,
                            const char* op);

// The thresholds in ascending order and, for each sorted position, its index in `thresholds`
// (ties keep their order). NaN or an empty list -> ValueError naming `op`.
struct SortedThresholds {
  std::vector<float> values;
  std::vector<std::size_t> order;
};
SortedThresholds sort_thresholds(const std::vector<float>& thresholds, const char* op);

// Keras' bucket of an evenly spaced AUC update, in float32 as Keras computes it: the number
// of its T thresholds (−ε, 1/(T−1), …, 1+ε) that pred exceeds, max(ceil(clip(p)·(T−1)) − 1, 0) + 1;
// NaN counts as 0 (exceeds only −ε, as a clipped 0 does).
inline int even_bucket(float p, int num_thresholds) {
  // The comparisons send NaN to the `p <= 0` branch.
  if (!(p > 0.f)) return 1;
  const float clipped = p > 1.f ? 1.f : p;
  float scaled = clipped * static_cast<float>(num_thresholds - 1);
  int k = static_cast<int>(std::ceil(scaled)) - 1;
  return (k < 0 ? 0 : k) + 1;
}

// (TP[T], FP[T], TN[T], FN[T]) in the thresholds' original order from the histograms
// positives[T+1] and negatives[T+1] (bucket = thresholds exceeded, in sorted order);
// `order` maps sorted positions to original indices (empty: identity).
std::vector<double> counts_from_histogram(const std::vector<std::uint64_t>& positives,
                                          const std::vector<std::uint64_t>& negatives,
                                          const std::vector<std::size_t>& order);

}  // namespace kerascpp::confusion
