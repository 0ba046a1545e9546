// Metrics named in compile(): each turns one replica's predictions into (sum, count) so that
// totals over replicas and batches are exact.
#pragma once
#include <string>
#include <utility>

#include "kerascpp/backend.hpp"
#include "kerascpp/losses.hpp"

namespace kerascpp::detail {

enum class MetricKind { sparse_categorical_accuracy, categorical_accuracy, binary_accuracy, mean_absolute_error };

struct MetricSpec {
  std::string name;  // the key in logs, as the user wrote it ("accuracy", "mae")
  MetricKind kind;
};

// Resolves a metric name; "accuracy" follows the loss like Keras. Unknown names -> kerascpp::Error.
MetricSpec resolve_metric(const std::string& name, const losses::Loss* loss);

// (sum, count) of the metric over one shard.
std::pair<double, double> metric_sums(Backend& backend, const MetricSpec& spec, const Tensor& pred,
                                      const Tensor& target);

}  // namespace kerascpp::detail
