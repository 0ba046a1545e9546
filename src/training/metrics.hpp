// How compile() turns its MetricRefs into the metrics the engine runs: each one turns one
// replica's predictions into (sum, count) so that totals over replicas and batches are exact.
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kerascpp/backend/backend.hpp"
#include "kerascpp/training/losses.hpp"
#include "kerascpp/training/metrics.hpp"

namespace kerascpp::detail {

struct MetricSpec {
  std::string name;  // the key in logs: the name as the user wrote it ("accuracy", "mae") or metric->name()
  std::shared_ptr<const metrics::Metric> metric;
  bool weighted = false;  // from CompileOptions::weighted_metrics: weighted by the sample weights
};

// Resolves a metric name or object; "accuracy" follows the loss like Keras. Unknown names,
// empty MetricRefs and metrics with an empty name -> ValueError.
MetricSpec resolve_metric(const metrics::MetricRef& ref, const losses::Loss* loss);

// The metric's totals over one shard (num_totals() values), checked for their count.
std::vector<double> metric_totals(Backend& backend, const MetricSpec& spec, const Tensor& pred, const Tensor& target);

}  // namespace kerascpp::detail
