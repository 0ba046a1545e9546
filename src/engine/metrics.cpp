#include "engine/metrics.hpp"

#include <fmt/format.h>

namespace kerascpp::detail {

MetricSpec resolve_metric(const std::string& name, const losses::Loss* loss) {
  if (name == "accuracy" || name == "acc") {
    auto kind = loss ? loss->accuracy_kind() : losses::Loss::AccuracyKind::categorical;
    switch (kind) {
      case losses::Loss::AccuracyKind::sparse_categorical: return {name, MetricKind::sparse_categorical_accuracy};
      case losses::Loss::AccuracyKind::binary: return {name, MetricKind::binary_accuracy};
      case losses::Loss::AccuracyKind::categorical: return {name, MetricKind::categorical_accuracy};
    }
  }
  if (name == "sparse_categorical_accuracy") return {name, MetricKind::sparse_categorical_accuracy};
  if (name == "categorical_accuracy") return {name, MetricKind::categorical_accuracy};
  if (name == "binary_accuracy") return {name, MetricKind::binary_accuracy};
  if (name == "mae" || name == "mean_absolute_error") return {name, MetricKind::mean_absolute_error};
  throw ValueError(fmt::format("unknown metric '{}'; use accuracy, sparse_categorical_accuracy, categorical_accuracy, "
                          "binary_accuracy or mae",
                          name));
}

std::pair<double, double> metric_sums(Backend& backend, const MetricSpec& spec, const Tensor& pred,
                                      const Tensor& target) {
  double rows = static_cast<double>(pred.dim(0));
  switch (spec.kind) {
    case MetricKind::sparse_categorical_accuracy:
      return {backend.sparse_categorical_accuracy_sum(pred, target), rows};
    case MetricKind::categorical_accuracy: return {backend.categorical_accuracy_sum(pred, target), rows};
    case MetricKind::binary_accuracy: {
      // Keras averages over every element (per example over the last axis, then over examples).
      double per_row = pred.dim(0) ? static_cast<double>(pred.numel()) / rows : 1;
      return {backend.binary_accuracy_sum(pred, target, 0.5f) / per_row, rows};
    }
    case MetricKind::mean_absolute_error: {
      double per_row = pred.dim(0) ? static_cast<double>(pred.numel()) / rows : 1;
      return {backend.absolute_error_sum(pred, target) / per_row, rows};
    }
  }
  return {0, 0};
}

}  // namespace kerascpp::detail
