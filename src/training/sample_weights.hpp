// Keras' per-example weights in fit/evaluate: a dataset's third component (x, y, sample_weight)
// or FitOptions::class_weight turned into one. The loss is Keras' "sum_over_batch_size",
// Σ w·loss / N, so each example's loss and gradient are just scaled by its weight; the
// weighted_metrics are Keras' weighted means, Σ w·v / Σ w.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kerascpp/tensor/tensor.hpp"
#include "training/metrics.hpp"

namespace kerascpp::detail {

// One shard's weights: on the replica's device (to scale losses and gradients) and the same
// rows on the host (to weight metrics). Both undefined: no weights.
struct ShardWeights {
  Tensor device;
  Tensor host;
  bool defined() const { return host.defined(); }
};

// A batch's sample weights as float32 [rows] on the host: [rows] or [rows, 1] float32, every
// value finite (Keras accepts negative weights, so do we). Anything else -> ShapeError/ValueError.
Tensor checked_sample_weight(const Tensor& sample_weight, std::int64_t rows, const std::string& model);

// Checks FitOptions::class_weight against the compiled model before training starts: a single
// output, a classification loss, class ids in [0, classes) where `classes` is the output's last
// dimension (2 for a one-unit sigmoid output), finite weights.
void check_class_weight(const std::map<int, double>& class_weight, std::size_t num_outputs, std::int64_t classes,
                        const std::string& loss_name, const std::string& model);

// Keras' class_weight_to_sample_weights: each row's class (its integer label, or the arg-max of a
// one-hot row) looked up in class_weight, 1 for a class it does not list. y is the host batch.
Tensor class_weight_to_sample_weight(const Tensor& y, const std::map<int, double>& class_weight,
                                     const std::string& model);

// A weighted metric's totals over one shard: each example's totals times its weight (a Keras
// Mean's Σ w·v and Σ w; weighted confusion counts for Precision/Recall/AUC). Runs of equal
// weights go through the metric as one slice, so equal weights cost one call.
std::vector<double> weighted_metric_totals(Backend& backend, const MetricSpec& spec, const Tensor& pred,
                                           const Tensor& target, const Tensor& host_weights);

}  // namespace kerascpp::detail
