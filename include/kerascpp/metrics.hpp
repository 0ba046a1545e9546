// Metrics reported by fit()/evaluate(): Keras names ("accuracy", "mae") or Metric objects,
// built-in or written by the user.
//
// A metric never keeps state between batches. For each replica's shard of a batch it returns a
// (sum, count) pair computed with Backend ops on that replica's device; the engine adds the
// pairs over replicas (in replica order) and batches, and logs sum / count. A mean computed
// this way is the same for 1 or N replicas and for any batch split, which a mean of per-shard
// means would not be.
//
// A user's metric, e.g. the mean of max(pred) over examples:
//
//   class MeanMaxPrediction : public kerascpp::metrics::Metric {
//    public:
//     std::string name() const override { return "mean_max_prediction"; }
//     MetricSums shard_sums(Backend& backend, const Tensor& pred, const Tensor& target) const override {
//       ... // Backend ops (backend.sum, backend.absolute_error_sum, ...) or host loops on a CPU tensor
//       return {sum_over_examples, static_cast<double>(pred.dim(0))};
//     }
//   };
//   model.compile({.optimizer = "adam", .loss = "mse", .metrics = {"mae", MeanMaxPrediction()}});
#pragma once
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "kerascpp/backend.hpp"

namespace kerascpp::metrics {

// One shard's contribution: the metric is sum / count over all shards and batches of an epoch.
struct MetricSums {
  double sum = 0.0;
  double count = 0.0;
};

class Metric {
 public:
  virtual ~Metric() = default;
  // The key in the logs and history ("val_" is prepended for validation). Must not be empty.
  virtual std::string name() const = 0;
  // (sum, count) over one replica's shard. `pred` is the model's output for the shard, on the
  // replica's device ([N, ...], N >= 1); `target` the shard's targets, moved to the same device.
  // Called from the replica's thread, possibly from several replicas at once: do not mutate
  // shared state (the method is const for that reason).
  virtual MetricSums shard_sums(Backend& backend, const Tensor& pred, const Tensor& target) const = 0;

  // A metric that is not one ratio sum / count (Precision, Recall, AUC: functions of
  // confusion-matrix counts) keeps num_totals() totals instead, summed like (sum, count) over
  // replicas, batches and workers, and turns them into the logged value with result(). The
  // defaults are the (sum, count) of shard_sums() and sum / count (0 when count is 0).
  virtual std::size_t num_totals() const { return 2; }
  // This shard's totals: num_totals() values, each a sum over the shard. Same rules as shard_sums().
  virtual std::vector<double> shard_totals(Backend& backend, const Tensor& pred, const Tensor& target) const {
    MetricSums s = shard_sums(backend, pred, target);
    return {s.sum, s.count};
  }
  // The logged value from totals summed over every shard and batch of the epoch.
  virtual double result(const std::vector<double>& totals) const { return totals[1] > 0 ? totals[0] / totals[1] : 0.0; }
};

// Base of the metrics made of confusion-matrix counts: shard_sums() has no meaning for them
// (the engine calls shard_totals()) and throws StateError if called.
class ConfusionMatrixMetric : public Metric {
 public:
  MetricSums shard_sums(Backend& backend, const Tensor& pred, const Tensor& target) const final;
};

// The built-in metrics. `name` overrides the log key (Keras' `name=` argument).

// Fraction of examples whose arg-max prediction equals the integer label ([N] or [N,1] labels).
class SparseCategoricalAccuracy : public Metric {
 public:
  explicit SparseCategoricalAccuracy(std::string name = "sparse_categorical_accuracy") : name_(std::move(name)) {}
  std::string name() const override { return name_; }
  MetricSums shard_sums(Backend& backend, const Tensor& pred, const Tensor& target) const override;

 private:
  std::string name_;
};

// Fraction of examples whose integer label is among the k highest-scored classes (Keras'
// SparseTopKCategoricalAccuracy; ties at the k-th score count as in).
class SparseTopKCategoricalAccuracy : public Metric {
 public:
  explicit SparseTopKCategoricalAccuracy(int k = 5, std::string name = "sparse_top_k_categorical_accuracy");
  std::string name() const override { return name_; }
  MetricSums shard_sums(Backend& backend, const Tensor& pred, const Tensor& target) const override;

 private:
  int k_;
  std::string name_;
};

// Fraction of examples whose arg-max prediction equals the arg-max of the one-hot target.
class CategoricalAccuracy : public Metric {
 public:
  explicit CategoricalAccuracy(std::string name = "categorical_accuracy") : name_(std::move(name)) {}
  std::string name() const override { return name_; }
  MetricSums shard_sums(Backend& backend, const Tensor& pred, const Tensor& target) const override;

 private:
  std::string name_;
};

// Fraction of elements where (pred > 0.5) equals the 0/1 target, averaged per example over the
// last axes and then over examples (Keras' binary_accuracy).
class BinaryAccuracy : public Metric {
 public:
  explicit BinaryAccuracy(std::string name = "binary_accuracy") : name_(std::move(name)) {}
  std::string name() const override { return name_; }
  MetricSums shard_sums(Backend& backend, const Tensor& pred, const Tensor& target) const override;

 private:
  std::string name_;
};

// Mean of |pred - target| per example, then over examples.
class MeanAbsoluteError : public Metric {
 public:
  explicit MeanAbsoluteError(std::string name = "mean_absolute_error") : name_(std::move(name)) {}
  std::string name() const override { return name_; }
  MetricSums shard_sums(Backend& backend, const Tensor& pred, const Tensor& target) const override;

 private:
  std::string name_;
};

// Keras' Precision, TP / (TP + FP), and Recall, TP / (TP + FN), at one threshold: an element of
// pred (every element; only column class_id of [..., C] when class_id is set) is predicted
// positive when > threshold, and is a positive when its target != 0. 0 when nothing is
// predicted positive (Recall: when there is no positive). Counts over elements, not examples.
// Keras' list of thresholds (a vector-valued result) and top_k are not supported: logs hold
// one number per metric.
struct PrecisionRecallOptions {
  float thresholds = 0.5f;  // Keras' name; one threshold in [0, 1]
  int class_id = -1;        // -1: every element (Keras' None)
};
class Precision : public ConfusionMatrixMetric {
 public:
  explicit Precision(PrecisionRecallOptions o = {}, std::string name = "precision");
  std::string name() const override { return name_; }
  std::size_t num_totals() const override { return 2; }  // TP, FP
  std::vector<double> shard_totals(Backend& backend, const Tensor& pred, const Tensor& target) const override;
  double result(const std::vector<double>& totals) const override;

 private:
  PrecisionRecallOptions o_;
  std::string name_;
};
class Recall : public ConfusionMatrixMetric {
 public:
  explicit Recall(PrecisionRecallOptions o = {}, std::string name = "recall");
  std::string name() const override { return name_; }
  std::size_t num_totals() const override { return 2; }  // TP, FN
  std::vector<double> shard_totals(Backend& backend, const Tensor& pred, const Tensor& target) const override;
  double result(const std::vector<double>& totals) const override;

 private:
  PrecisionRecallOptions o_;
  std::string name_;
};

// Keras' AUC over num_thresholds evenly spaced thresholds −ε, 1/(T−1), …, (T−2)/(T−1), 1+ε
// (ε = 1e-7), counted as Keras does (Backend::even_confusion_counts). curve ROC: area under
// recall over false-positive rate; PR: under precision over recall. summation_method
// "interpolation" (trapezoids; for PR Davis & Goadrich's interpolation, as Keras),
// "minoring" or "majoring" (left/right Riemann sums with the smaller/larger height).
// from_logits applies a sigmoid to pred first. Keras' explicit thresholds list, multi_label
// and label_weights are not supported.
struct AUCOptions {
  int num_thresholds = 200;
  std::string curve = "ROC";                       // "ROC" or "PR" (case-insensitive)
  std::string summation_method = "interpolation";  // "interpolation", "minoring" or "majoring"
  bool from_logits = false;
};
class AUC : public ConfusionMatrixMetric {
 public:
  explicit AUC(AUCOptions o = {}, std::string name = "auc");
  std::string name() const override { return name_; }
  // TP[T], FP[T], TN[T], FN[T]
  std::size_t num_totals() const override { return 4 * static_cast<std::size_t>(o_.num_thresholds); }
  std::vector<double> shard_totals(Backend& backend, const Tensor& pred, const Tensor& target) const override;
  double result(const std::vector<double>& totals) const override;

 private:
  enum class Curve : std::uint8_t { roc, pr };
  enum class Summation : std::uint8_t { interpolation, minoring, majoring };
  AUCOptions o_;
  Curve curve_;
  Summation summation_;
  std::string name_;
};

// What compile() accepts for one metric: a Keras name or a Metric object. Names are resolved
// by compile(), because "accuracy" means the accuracy that fits the loss (sparse categorical
// for sparse_categorical_crossentropy, binary for binary_crossentropy, categorical otherwise).
// Accepted names: "accuracy"/"acc", "sparse_categorical_accuracy", "categorical_accuracy",
// "binary_accuracy", "mae"/"mean_absolute_error", "precision", "recall", "auc" (Keras'
// defaults); the log key is the name as written.
class MetricRef {
 public:
  MetricRef() = default;
  MetricRef(const char* name) : name_(name) {}             // NOLINT: implicit by design, like Keras strings
  MetricRef(std::string name) : name_(std::move(name)) {}  // NOLINT
  template <class M, class = std::enable_if_t<std::is_base_of_v<Metric, M>>>
  MetricRef(M metric) : metric_(std::make_shared<M>(std::move(metric))) {}  // NOLINT
  template <class M, class = std::enable_if_t<std::is_base_of_v<Metric, M>>>
  MetricRef(std::shared_ptr<M> metric) : metric_(std::move(metric)) {}  // NOLINT: share one object

  // The object, or null when this names a metric still to be resolved by compile().
  const std::shared_ptr<const Metric>& metric() const { return metric_; }
  // The name as written (empty for an object; use metric()->name()).
  const std::string& name() const { return name_; }

 private:
  std::string name_;
  std::shared_ptr<const Metric> metric_;
};

}  // namespace kerascpp::metrics
