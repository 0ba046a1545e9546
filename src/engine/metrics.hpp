// How compile() turns its MetricRefs into the metrics the engine runs: each one turns one
// replica's predictions into (sum, count) so that totals over replicas and batches are exact.
#pragma once
#include <memory>
#include <string>
#include <utility>

#include "kerascpp/backend.hpp"
#include "kerascpp/losses.hpp"
#include "kerascpp/metrics.hpp"

namespace kerascpp::detail {

struct MetricSpec {
  std::string name;  // the key in logs: the name as the user wrote it ("accuracy", "mae") or metric->name()
  std::shared_ptr<const metrics::Metric> metric;
};

// Resolves a metric name or object; "accuracy" follows the loss like Keras. Unknown names,
// empty MetricRefs and metrics with an empty name -> ValueError.
MetricSpec resolve_metric(const metrics::MetricRef& ref, const losses::Loss* loss);

// (sum, count) of the metric over one shard.
std::pair<double, double> metric_sums(Backend& backend, const MetricSpec& spec, const Tensor& pred,
                                      const Tensor& target);

}  // namespace kerascpp::detail
