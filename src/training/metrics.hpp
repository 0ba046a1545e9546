// How compile() turns its MetricRefs into the metrics the engine runs: each one turns one
// replica's predictions into (sum, count) so that totals over replicas and batches are exact.
#pragma once
#include <functional>
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

// A metric whose totals are sized by the model's output width (R2Score's outputs, FBetaScore's
// classes): Keras builds them on the first batch, kerascpp sizes totals at compile(), so
// resolve_metric makes the real metric from the width it is given. Made by load_model for the
// metric objects of a compile_config; never run itself.
class OutputSizedMetric : public metrics::Metric {
 public:
  using Make = std::function<std::shared_ptr<const metrics::Metric>(int output_width)>;
  OutputSizedMetric(std::string name, Make make) : name_(std::move(name)), make_(std::move(make)) {}
  std::string name() const override { return name_; }
  metrics::MetricSums shard_sums(Backend& backend, const Tensor& pred, const Tensor& target) const override;
  std::shared_ptr<const metrics::Metric> make(int output_width) const { return make_(output_width); }

 private:
  std::string name_;
  Make make_;
};

// Resolves a metric name or object; "accuracy" follows the loss like Keras; `output_width` (the
// model's output's last axis, 1 where unknown) sizes "r2_score" and OutputSizedMetric. Unknown
// names, empty MetricRefs and metrics with an empty name -> ValueError.
MetricSpec resolve_metric(const metrics::MetricRef& ref, const losses::Loss* loss, int output_width = 1);

// The metric's totals over one shard (num_totals() values), checked for their count.
std::vector<double> metric_totals(Backend& backend, const MetricSpec& spec, const Tensor& pred, const Tensor& target);

}  // namespace kerascpp::detail
