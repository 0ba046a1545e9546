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
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "kerascpp/backend/backend.hpp"
#include "kerascpp/training/losses.hpp"

/// Keras' metrics (keras.metrics), and the Metric interface for your own.
namespace kerascpp::metrics {

/// One shard's contribution: the metric is sum / count over all shards and batches of an epoch.
struct MetricSums {
  /// The sum over the shard's examples.
  double sum = 0.0;
  /// What the sum is divided by (normally the number of examples).
  double count = 0.0;
};

/// A metric as (sum, count) per replica shard, summed by the engine (see above).
class Metric {
 public:
  /// Destroys the metric.
  virtual ~Metric() = default;
  /// The key in the logs and history ("val_" is prepended for validation). Must not be empty.
  virtual std::string name() const = 0;
  /// (sum, count) over one replica's shard. `pred` is the model's output for the shard, on the
  /// replica's device ([N, ...], N >= 1); `target` the shard's targets, moved to the same device.
  /// Called from the replica's thread, possibly from several replicas at once: do not mutate
  /// shared state (the method is const for that reason).
  virtual MetricSums shard_sums(Backend& backend, const Tensor& pred, const Tensor& target) const = 0;

  /// A metric that is not one ratio sum / count (Precision, Recall, AUC: functions of
  /// confusion-matrix counts) keeps num_totals() totals instead, summed like (sum, count) over
  /// replicas, batches and workers, and turns them into the logged value with result(). The
  /// defaults are the (sum, count) of shard_sums() and sum / count (0 when count is 0).
  virtual std::size_t num_totals() const { return 2; }
  /// This shard's totals: num_totals() values, each a sum over the shard. Same rules as shard_sums().
  virtual std::vector<double> shard_totals(Backend& backend, const Tensor& pred, const Tensor& target) const {
    MetricSums s = shard_sums(backend, pred, target);
    return {s.sum, s.count};
  }
  /// The logged value from totals summed over every shard and batch of the epoch.
  virtual double result(const std::vector<double>& totals) const { return totals[1] > 0 ? totals[0] / totals[1] : 0.0; }
};

/// Base of the metrics made of confusion-matrix counts: shard_sums() has no meaning for them
/// (the engine calls shard_totals()) and throws StateError if called.
class ConfusionMatrixMetric : public Metric {
 public:
  /// Throws StateError: these metrics have only shard_totals().
  MetricSums shard_sums(Backend& backend, const Tensor& pred, const Tensor& target) const final;
};

// The built-in metrics. `name` overrides the log key (Keras' `name=` argument).

/// Fraction of examples whose arg-max prediction equals the integer label ([N] or [N,1] labels).
class SparseCategoricalAccuracy : public Metric {
 public:
  /// A metric logged as `name`.
  explicit SparseCategoricalAccuracy(std::string name = "sparse_categorical_accuracy") : name_(std::move(name)) {}
  std::string name() const override { return name_; }
  MetricSums shard_sums(Backend& backend, const Tensor& pred, const Tensor& target) const override;

 private:
  std::string name_;
};

/// Fraction of examples whose integer label is among the k highest-scored classes (Keras'
/// SparseTopKCategoricalAccuracy; ties at the k-th score count as in).
class SparseTopKCategoricalAccuracy : public Metric {
 public:
  /// Counts a hit when the label is among the `k` best classes; logged as `name`.
  explicit SparseTopKCategoricalAccuracy(int k = 5, std::string name = "sparse_top_k_categorical_accuracy");
  std::string name() const override { return name_; }
  MetricSums shard_sums(Backend& backend, const Tensor& pred, const Tensor& target) const override;

 private:
  int k_;
  std::string name_;
};

/// Fraction of examples whose arg-max prediction equals the arg-max of the one-hot target.
class CategoricalAccuracy : public Metric {
 public:
  /// A metric logged as `name`.
  explicit CategoricalAccuracy(std::string name = "categorical_accuracy") : name_(std::move(name)) {}
  std::string name() const override { return name_; }
  MetricSums shard_sums(Backend& backend, const Tensor& pred, const Tensor& target) const override;

 private:
  std::string name_;
};

/// Fraction of elements where (pred > 0.5) equals the 0/1 target, averaged per example over the
/// last axes and then over examples (Keras' binary_accuracy).
class BinaryAccuracy : public Metric {
 public:
  /// A metric logged as `name`.
  explicit BinaryAccuracy(std::string name = "binary_accuracy") : name_(std::move(name)) {}
  std::string name() const override { return name_; }
  MetricSums shard_sums(Backend& backend, const Tensor& pred, const Tensor& target) const override;

 private:
  std::string name_;
};

/// Mean of |pred - target| per example, then over examples.
class MeanAbsoluteError : public Metric {
 public:
  /// A metric logged as `name`.
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
/// The settings of Precision and Recall (see above), with Keras' names and defaults.
struct PrecisionRecallOptions {
  float thresholds = 0.5f;  ///< Keras' name; one threshold in [0, 1]
  int class_id = -1;        ///< -1: every element (Keras' None)
};
/// Keras' Precision: TP / (TP + FP) over elements (see above).
class Precision : public ConfusionMatrixMetric {
 public:
  /// A metric with these settings, logged as `name`.
  explicit Precision(PrecisionRecallOptions o = {}, std::string name = "precision");
  std::string name() const override { return name_; }
  std::size_t num_totals() const override { return 2; }  ///< TP, FP
  std::vector<double> shard_totals(Backend& backend, const Tensor& pred, const Tensor& target) const override;
  double result(const std::vector<double>& totals) const override;

 private:
  PrecisionRecallOptions o_;
  std::string name_;
};
/// Keras' Recall: TP / (TP + FN) over elements (see above).
class Recall : public ConfusionMatrixMetric {
 public:
  /// A metric with these settings, logged as `name`.
  explicit Recall(PrecisionRecallOptions o = {}, std::string name = "recall");
  std::string name() const override { return name_; }
  std::size_t num_totals() const override { return 2; }  ///< TP, FN
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
/// AUC's settings (see above), with Keras' names and defaults.
struct AUCOptions {
  /// The number of thresholds the curve is sampled at.
  int num_thresholds = 200;
  std::string curve = "ROC";                       ///< "ROC" or "PR" (case-insensitive)
  std::string summation_method = "interpolation";  ///< "interpolation", "minoring" or "majoring"
  /// Apply a sigmoid to the predictions first.
  bool from_logits = false;
};
/// Keras' AUC: the area under the ROC or PR curve (see above).
class AUC : public ConfusionMatrixMetric {
 public:
  /// A metric with these settings, logged as `name`.
  explicit AUC(AUCOptions o = {}, std::string name = "auc");
  std::string name() const override { return name_; }
  /// TP[T], FP[T], TN[T], FN[T]
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

// ---- means of a per-example value (Keras' MeanMetricWrapper and the metrics made with it) ----

/// Keras' MeanMetricWrapper: the mean over examples of a per-example value of (pred, target).
class MeanMetricWrapper : public Metric {
 public:
  /// Writes one value per example into `values` (float32 [N] on pred's device, allocated by the caller).
  using Fn = std::function<void(Backend& backend, const Tensor& pred, const Tensor& target, Tensor& values)>;
  /// The mean of fn's values; `name` is the log key (must not be empty).
  MeanMetricWrapper(Fn fn, std::string name);
  /// The mean of a loss's per-example values (Keras' metric of a loss function).
  MeanMetricWrapper(const losses::LossRef& loss, std::string name);
  std::string name() const override { return name_; }
  MetricSums shard_sums(Backend& backend, const Tensor& pred, const Tensor& target) const override;

 private:
  Fn fn_;
  std::string name_;
};

/// Keras' Accuracy: the fraction of elements where pred == target exactly.
class Accuracy : public MeanMetricWrapper {
 public:
  /// A metric logged as `name`.
  explicit Accuracy(std::string name = "accuracy");
};

/// Keras' TopKCategoricalAccuracy: argmax of the one-hot target among the k highest scores (ties count in).
class TopKCategoricalAccuracy : public MeanMetricWrapper {
 public:
  /// Counts a hit when the target class is among the `k` highest scores.
  explicit TopKCategoricalAccuracy(int k = 5, std::string name = "top_k_categorical_accuracy");
};

/// Keras' metrics.MeanSquaredError: mean (pred − target)².
class MeanSquaredError : public MeanMetricWrapper {
 public:
  /// A metric logged as `name`.
  explicit MeanSquaredError(std::string name = "mean_squared_error");
};

/// Keras' RootMeanSquaredError: √(mean (pred − target)²) over the epoch's values.
class RootMeanSquaredError : public MeanMetricWrapper {
 public:
  /// A metric logged as `name`.
  explicit RootMeanSquaredError(std::string name = "root_mean_squared_error");
  double result(const std::vector<double>& totals) const override;
};

/// Keras' metrics.MeanAbsolutePercentageError (the loss of that name, averaged).
class MeanAbsolutePercentageError : public MeanMetricWrapper {
 public:
  /// A metric logged as `name`.
  explicit MeanAbsolutePercentageError(std::string name = "mean_absolute_percentage_error");
};

/// Keras' metrics.MeanSquaredLogarithmicError (the loss of that name, averaged).
class MeanSquaredLogarithmicError : public MeanMetricWrapper {
 public:
  /// A metric logged as `name`.
  explicit MeanSquaredLogarithmicError(std::string name = "mean_squared_logarithmic_error");
};

/// Keras' LogCoshError: mean log(cosh(pred − target)).
class LogCoshError : public MeanMetricWrapper {
 public:
  /// A metric logged as `name`.
  explicit LogCoshError(std::string name = "logcosh");
};

/// Keras' metrics.CosineSimilarity over the last axis: +cos(pred, target) (the loss' opposite).
class CosineSimilarity : public MeanMetricWrapper {
 public:
  /// A metric logged as `name`.
  explicit CosineSimilarity(std::string name = "cosine_similarity");
};

/// Keras' metrics.Poisson (the loss of that name, averaged).
class Poisson : public MeanMetricWrapper {
 public:
  /// A metric logged as `name`.
  explicit Poisson(std::string name = "poisson");
};

/// Keras' metrics.KLDivergence (the loss of that name, averaged).
class KLDivergence : public MeanMetricWrapper {
 public:
  /// A metric logged as `name`.
  explicit KLDivergence(std::string name = "kl_divergence");
};

/// Keras' metrics.Hinge (the loss of that name, averaged).
class Hinge : public MeanMetricWrapper {
 public:
  /// A metric logged as `name`.
  explicit Hinge(std::string name = "hinge");
};

/// Keras' metrics.SquaredHinge (the loss of that name, averaged).
class SquaredHinge : public MeanMetricWrapper {
 public:
  /// A metric logged as `name`.
  explicit SquaredHinge(std::string name = "squared_hinge");
};

/// Keras' metrics.CategoricalHinge (the loss of that name, averaged).
class CategoricalHinge : public MeanMetricWrapper {
 public:
  /// A metric logged as `name`.
  explicit CategoricalHinge(std::string name = "categorical_hinge");
};

/// Keras' metrics.BinaryCrossentropy (the loss of that name, averaged).
class BinaryCrossentropy : public MeanMetricWrapper {
 public:
  /// With the loss' options (from_logits, label_smoothing, ...).
  explicit BinaryCrossentropy(losses::CrossentropyOptions o = {}, std::string name = "binary_crossentropy");
};

/// Keras' metrics.CategoricalCrossentropy (the loss of that name, averaged).
class CategoricalCrossentropy : public MeanMetricWrapper {
 public:
  /// With the loss' options (from_logits, label_smoothing, ...).
  explicit CategoricalCrossentropy(losses::CrossentropyOptions o = {}, std::string name = "categorical_crossentropy");
};

/// Keras' metrics.SparseCategoricalCrossentropy (the loss of that name, averaged).
class SparseCategoricalCrossentropy : public MeanMetricWrapper {
 public:
  /// `from_logits`: predictions are logits, not probabilities.
  explicit SparseCategoricalCrossentropy(bool from_logits = false,
                                         std::string name = "sparse_categorical_crossentropy");
};

/// Keras' PearsonCorrelation (axis=-1): Pearson's r of each row of the last axis, averaged.
class PearsonCorrelation : public MeanMetricWrapper {
 public:
  /// A metric logged as `name`.
  explicit PearsonCorrelation(std::string name = "pearson_correlation");
};

/// Keras' ConcordanceCorrelation (axis=-1): Lin's concordance of each row of the last axis, averaged.
class ConcordanceCorrelation : public MeanMetricWrapper {
 public:
  /// A metric logged as `name`.
  explicit ConcordanceCorrelation(std::string name = "concordance_correlation");
};

// ---- metrics of several totals ----

/// Keras' Sum, of the model's predictions (every element of every batch).
class Sum : public Metric {
 public:
  /// A metric logged as `name`.
  explicit Sum(std::string name = "sum") : name_(std::move(name)) {}
  std::string name() const override { return name_; }
  MetricSums shard_sums(Backend& backend, const Tensor& pred, const Tensor& target) const override;
  double result(const std::vector<double>& totals) const override { return totals[0]; }

 private:
  std::string name_;
};

/// Keras' Mean, of the model's predictions (every element of every batch).
class Mean : public Metric {
 public:
  /// A metric logged as `name`.
  explicit Mean(std::string name = "mean") : name_(std::move(name)) {}
  std::string name() const override { return name_; }
  MetricSums shard_sums(Backend& backend, const Tensor& pred, const Tensor& target) const override;

 private:
  std::string name_;
};

/// Keras' R2Score options; num_outputs (pred's last axis, 1 for [N] predictions) sizes the totals
/// before the first batch, where Keras builds them on it.
struct R2ScoreOptions {
  std::string class_aggregation = "uniform_average";  ///< or "variance_weighted_average"
  int num_regressors = 0;                             ///< > 0: the adjusted R²
  /// The size of pred's last axis (1 for [N] predictions).
  int num_outputs = 1;
};
/// Keras' R2Score: 1 − Σ(y − ŷ)² / Σ(y − ȳ)² per output, aggregated over outputs.
class R2Score : public Metric {
 public:
  /// R² as `o` aggregates it.
  explicit R2Score(R2ScoreOptions o = {}, std::string name = "r2_score");
  std::string name() const override { return name_; }
  MetricSums shard_sums(Backend& backend, const Tensor& pred, const Tensor& target) const override;
  // Σy, Σy², Σ(y − ŷ)² per output, then the sample count and the value count.
  std::size_t num_totals() const override { return 3 * static_cast<std::size_t>(o_.num_outputs) + 2; }
  std::vector<double> shard_totals(Backend& backend, const Tensor& pred, const Tensor& target) const override;
  double result(const std::vector<double>& totals) const override;

 private:
  R2ScoreOptions o_;
  std::string name_;
};

/// Keras' FBetaScore options. average None (a value per class) is not supported: logs hold one
/// number per metric. num_classes (pred's last axis) sizes the totals before the first batch.
struct FBetaOptions {
  std::string average = "macro";    ///< "micro", "macro" or "weighted"
  double beta = 1.0;                ///< > 0
  std::optional<double> threshold;  ///< in (0, 1]; none: each row's largest score is the predicted class
  /// The size of pred's last axis.
  int num_classes = 1;
};
/// Keras' FBetaScore over [N, classes] predictions and 0/1 targets.
class FBetaScore : public ConfusionMatrixMetric {
 public:
  /// F-beta as `o` averages it.
  explicit FBetaScore(FBetaOptions o = {}, std::string name = "fbeta_score");
  std::string name() const override { return name_; }
  std::size_t num_totals() const override { return 3 * static_cast<std::size_t>(o_.num_classes); }  // TP, FP, FN
  std::vector<double> shard_totals(Backend& backend, const Tensor& pred, const Tensor& target) const override;
  double result(const std::vector<double>& totals) const override;

 private:
  FBetaOptions o_;
  std::string name_;
};
/// Keras' F1Score: FBetaScore with beta = 1.
class F1Score : public FBetaScore {
 public:
  /// `o.beta` must stay 1 (ValueError otherwise; FBetaScore takes others).
  explicit F1Score(FBetaOptions o = {}, std::string name = "f1_score");
};

/// Keras' TruePositives, FalsePositives, TrueNegatives and FalseNegatives: element counts at one
/// threshold (pred > threshold is a predicted positive, target != 0 a positive).
class ConfusionCount : public ConfusionMatrixMetric {
 public:
  /// Which of the four counts the metric reports.
  enum class Which : std::uint8_t { true_positives, false_positives, true_negatives, false_negatives };
  /// One of the four counts at `thresholds` (Keras' name; one threshold in [0, 1]).
  ConfusionCount(Which which, float thresholds, std::string name);
  std::string name() const override { return name_; }
  std::size_t num_totals() const override { return 1; }
  std::vector<double> shard_totals(Backend& backend, const Tensor& pred, const Tensor& target) const override;
  double result(const std::vector<double>& totals) const override { return totals[0]; }

 private:
  Which which_;
  float threshold_;
  std::string name_;
};
/// Keras' TruePositives.
class TruePositives : public ConfusionCount {
 public:
  /// Counted at the one threshold `thresholds`.
  explicit TruePositives(float thresholds = 0.5f, std::string name = "true_positives")
      : ConfusionCount(Which::true_positives, thresholds, std::move(name)) {}
};
/// Keras' FalsePositives.
class FalsePositives : public ConfusionCount {
 public:
  /// Counted at the one threshold `thresholds`.
  explicit FalsePositives(float thresholds = 0.5f, std::string name = "false_positives")
      : ConfusionCount(Which::false_positives, thresholds, std::move(name)) {}
};
/// Keras' TrueNegatives.
class TrueNegatives : public ConfusionCount {
 public:
  /// Counted at the one threshold `thresholds`.
  explicit TrueNegatives(float thresholds = 0.5f, std::string name = "true_negatives")
      : ConfusionCount(Which::true_negatives, thresholds, std::move(name)) {}
};
/// Keras' FalseNegatives.
class FalseNegatives : public ConfusionCount {
 public:
  /// Counted at the one threshold `thresholds`.
  explicit FalseNegatives(float thresholds = 0.5f, std::string name = "false_negatives")
      : ConfusionCount(Which::false_negatives, thresholds, std::move(name)) {}
};

/// Base of Keras' PrecisionAtRecall, RecallAtPrecision, SensitivityAtSpecificity and
/// SpecificityAtSensitivity: over num_thresholds evenly spaced thresholds (AUC's), the largest
/// value of one rate among the thresholds where another rate is >= `value` (0 when none is).
class RateAtRate : public ConfusionMatrixMetric {
 public:
  /// The rates: precision TP/(TP+FP), recall (sensitivity) TP/(TP+FN), specificity TN/(TN+FP).
  enum class Rate : std::uint8_t { precision, recall, specificity };
  /// The largest `dependent` where `constrained` >= value; class_id -1: every element.
  RateAtRate(Rate dependent, Rate constrained, double value, int num_thresholds, int class_id, std::string name);
  std::string name() const override { return name_; }
  std::size_t num_totals() const override { return 4 * static_cast<std::size_t>(num_thresholds_); }
  std::vector<double> shard_totals(Backend& backend, const Tensor& pred, const Tensor& target) const override;
  double result(const std::vector<double>& totals) const override;

 private:
  Rate dependent_, constrained_;
  double value_;
  int num_thresholds_, class_id_;
  std::string name_;
};
/// Keras' PrecisionAtRecall(recall, num_thresholds=200, class_id=None).
class PrecisionAtRecall : public RateAtRate {
 public:
  /// The best precision where recall >= `recall`; class_id -1: every element.
  explicit PrecisionAtRecall(double recall, int num_thresholds = 200, int class_id = -1,
                             std::string name = "precision_at_recall")
      : RateAtRate(Rate::precision, Rate::recall, recall, num_thresholds, class_id, std::move(name)) {}
};
/// Keras' RecallAtPrecision(precision, num_thresholds=200, class_id=None).
class RecallAtPrecision : public RateAtRate {
 public:
  /// The best recall where precision >= `precision`; class_id -1: every element.
  explicit RecallAtPrecision(double precision, int num_thresholds = 200, int class_id = -1,
                             std::string name = "recall_at_precision")
      : RateAtRate(Rate::recall, Rate::precision, precision, num_thresholds, class_id, std::move(name)) {}
};
/// Keras' SensitivityAtSpecificity(specificity, num_thresholds=200, class_id=None).
class SensitivityAtSpecificity : public RateAtRate {
 public:
  /// The best sensitivity where specificity >= `specificity`; class_id -1: every element.
  explicit SensitivityAtSpecificity(double specificity, int num_thresholds = 200, int class_id = -1,
                                    std::string name = "sensitivity_at_specificity")
      : RateAtRate(Rate::recall, Rate::specificity, specificity, num_thresholds, class_id, std::move(name)) {}
};
/// Keras' SpecificityAtSensitivity(sensitivity, num_thresholds=200, class_id=None).
class SpecificityAtSensitivity : public RateAtRate {
 public:
  /// The best specificity where sensitivity >= `sensitivity`; class_id -1: every element.
  explicit SpecificityAtSensitivity(double sensitivity, int num_thresholds = 200, int class_id = -1,
                                    std::string name = "specificity_at_sensitivity")
      : RateAtRate(Rate::specificity, Rate::recall, sensitivity, num_thresholds, class_id, std::move(name)) {}
};

/// Options of the IoU metrics (Keras' arguments; ignore_class -1 is Keras' None).
struct IoUOptions {
  /// A target class id left out of the confusion matrix; -1: none.
  int ignore_class = -1;
  bool sparse_y_true = true;  ///< false: targets are one-hot (argmax over the last axis)
  bool sparse_y_pred = true;  ///< false: predictions are scores (argmax over the last axis)
};
/// Keras' IoU: mean over target_class_ids of TP / (TP + FP + FN), from the confusion matrix of
/// class ids over the epoch (classes without any entry are left out of the mean).
class IoU : public ConfusionMatrixMetric {
 public:
  /// Class ids in [0, num_classes); the mean runs over `target_class_ids`.
  IoU(int num_classes, std::vector<int> target_class_ids, IoUOptions o = {}, std::string name = "io_u");
  std::string name() const override { return name_; }
  std::size_t num_totals() const override { return static_cast<std::size_t>(num_classes_) * num_classes_; }
  std::vector<double> shard_totals(Backend& backend, const Tensor& pred, const Tensor& target) const override;
  double result(const std::vector<double>& totals) const override;

 protected:
  /// The confusion matrix is num_classes_ x num_classes_.
  int num_classes_;
  /// The classes averaged over.
  std::vector<int> target_class_ids_;
  /// The options given.
  IoUOptions o_;
  /// The log key.
  std::string name_;
  float threshold_ = -1.f;  ///< BinaryIoU's: class 1 where pred >= threshold
};
/// Keras' MeanIoU: IoU over every class.
class MeanIoU : public IoU {
 public:
  /// Class ids in [0, num_classes).
  explicit MeanIoU(int num_classes, IoUOptions o = {}, std::string name = "mean_io_u");
};
/// Keras' BinaryIoU: IoU of the classes pred >= threshold (1) and below (0) against 0/1 targets.
class BinaryIoU : public IoU {
 public:
  /// Class 1 where pred >= `threshold`, else 0.
  explicit BinaryIoU(std::vector<int> target_class_ids = {0, 1}, float threshold = 0.5f,
                     std::string name = "binary_io_u");
};
/// Keras' OneHotIoU: IoU with one-hot targets and score predictions.
class OneHotIoU : public IoU {
 public:
  /// Class ids in [0, num_classes); `ignore_class` -1: none.
  OneHotIoU(int num_classes, std::vector<int> target_class_ids, int ignore_class = -1,
            std::string name = "one_hot_io_u");
};
/// Keras' OneHotMeanIoU: MeanIoU with one-hot targets and score predictions.
class OneHotMeanIoU : public IoU {
 public:
  /// Class ids in [0, num_classes); `ignore_class` -1: none.
  explicit OneHotMeanIoU(int num_classes, int ignore_class = -1, std::string name = "one_hot_mean_io_u");
};

/// What compile() accepts for one metric: a Keras name or a Metric object. Names are resolved
/// by compile(), because "accuracy" means the accuracy that fits the loss (sparse categorical
/// for sparse_categorical_crossentropy, binary for binary_crossentropy, categorical otherwise).
/// Accepted names: "accuracy"/"acc" and the snake_case name of every metric above that Keras can
/// make with its defaults ("mae", "mse", "mape", "msle" too); the list is in
/// docs/training_and_evaluation.md. The log key is the name as written.
class MetricRef {
 public:
  /// No metric.
  MetricRef() = default;
  /// @{
  /// A metric by Keras name, resolved by compile() (see above).
  MetricRef(const char* name) : name_(name) {}             // NOLINT: implicit by design, like Keras strings
  MetricRef(std::string name) : name_(std::move(name)) {}  // NOLINT
  /// @}
  template <class M, class = std::enable_if_t<std::is_base_of_v<Metric, M>>>
  /// Holds a copy of `metric`.
  MetricRef(M metric) : metric_(std::make_shared<M>(std::move(metric))) {}  // NOLINT
  template <class M, class = std::enable_if_t<std::is_base_of_v<Metric, M>>>
  MetricRef(std::shared_ptr<M> metric) : metric_(std::move(metric)) {}  ///< NOLINT: share one object

  /// The object, or null when this names a metric still to be resolved by compile().
  const std::shared_ptr<const Metric>& metric() const { return metric_; }
  /// The name as written (empty for an object; use metric()->name()).
  const std::string& name() const { return name_; }

 private:
  std::string name_;
  std::shared_ptr<const Metric> metric_;
};

}  // namespace kerascpp::metrics
