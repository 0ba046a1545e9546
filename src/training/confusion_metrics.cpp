// Precision, Recall, AUC, the four confusion counts and the rate-at-rate metrics: each shard contributes
// confusion-matrix counts (Backend ops), the engine adds them over replicas, batches and workers like any metric's
// totals, and result() applies Keras' formula to the summed counts, so 1 or N replicas give the same value.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "check.hpp"
#include "kerascpp/training/metrics.hpp"

namespace kerascpp::metrics {

namespace {

// Keras' ops.divide_no_nan.
double divide_no_nan(double a, double b) { return b == 0.0 ? 0.0 : a / b; }

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

void check_options(const PrecisionRecallOptions& o, const char* metric) {
  KERASCPP_CHECK_VALUE(o.thresholds >= 0.f && o.thresholds <= 1.f,
                       "{}: thresholds must be in [0, 1] (as in Keras), got {}; the default is 0.5", metric,
                       o.thresholds);
  KERASCPP_CHECK_VALUE(o.class_id >= -1, "{}: class_id must be a class index >= 0, or -1 for every element, got {}",
                       metric, o.class_id);
}

// (TP, FP, TN, FN) of one shard at the metric's threshold.
std::vector<double> counts_at_threshold(Backend& backend, const Tensor& pred, const Tensor& target,
                                        const PrecisionRecallOptions& o, const std::string& metric) {
  std::int64_t stride = 1, offset = 0;
  if (o.class_id >= 0) {
    KERASCPP_CHECK_VALUE(
        pred.rank() >= 2 && o.class_id < pred.dim(-1),
        "metric '{}': class_id {} needs predictions of shape [N, classes] with more than {} classes, got "
        "{}; pass a class index that exists",
        metric, o.class_id, o.class_id, shape_str(pred.shape()));
    stride = pred.dim(-1);
    offset = o.class_id;
  }
  return backend.confusion_counts(pred, target, {o.thresholds}, stride, offset);
}

}  // namespace

MetricSums ConfusionMatrixMetric::shard_sums(Backend&, const Tensor&, const Tensor&) const {
  throw StateError(
      fmt::format("metric '{}' is made of confusion-matrix counts: call shard_totals() and result(), "
                  "not shard_sums()",
                  name()));
}

Precision::Precision(PrecisionRecallOptions o, std::string name) : o_(o), name_(std::move(name)) {
  check_options(o_, "Precision");
}

std::vector<double> Precision::shard_totals(Backend& backend, const Tensor& pred, const Tensor& target) const {
  std::vector<double> c = counts_at_threshold(backend, pred, target, o_, name_);
  return {c[0], c[1]};  // TP, FP
}

double Precision::result(const std::vector<double>& t) const { return divide_no_nan(t[0], t[0] + t[1]); }

Recall::Recall(PrecisionRecallOptions o, std::string name) : o_(o), name_(std::move(name)) {
  check_options(o_, "Recall");
}

std::vector<double> Recall::shard_totals(Backend& backend, const Tensor& pred, const Tensor& target) const {
  std::vector<double> c = counts_at_threshold(backend, pred, target, o_, name_);
  return {c[0], c[3]};  // TP, FN
}

double Recall::result(const std::vector<double>& t) const { return divide_no_nan(t[0], t[0] + t[1]); }

AUC::AUC(AUCOptions o, std::string name) : o_(std::move(o)), name_(std::move(name)) {
  // The upper bound keeps the 4·T totals (which cross workers every step) reasonable.
  KERASCPP_CHECK_VALUE(
      o_.num_thresholds >= 2 && o_.num_thresholds <= (1 << 20),
      "AUC: num_thresholds must be an integer > 1 (and at most 2^20), got {}; the Keras default is 200",
      o_.num_thresholds);
  const std::string curve = lower(o_.curve);
  if (curve == "roc") curve_ = Curve::roc;
  else if (curve == "pr") curve_ = Curve::pr;
  else throw ValueError(fmt::format("AUC: curve must be \"ROC\" or \"PR\", got \"{}\"", o_.curve));
  const std::string method = lower(o_.summation_method);
  if (method == "interpolation") summation_ = Summation::interpolation;
  else if (method == "minoring") summation_ = Summation::minoring;
  else if (method == "majoring") summation_ = Summation::majoring;
  else
    throw ValueError(
        fmt::format("AUC: summation_method must be \"interpolation\", \"minoring\" or \"majoring\", got \"{}\"",
                    o_.summation_method));
}

std::vector<double> AUC::shard_totals(Backend& backend, const Tensor& pred, const Tensor& target) const {
  if (!o_.from_logits) return backend.even_confusion_counts(pred, target, o_.num_thresholds);
  Tensor probs;
  backend.activation_forward(ActivationKind::sigmoid, pred, probs);
  return backend.even_confusion_counts(probs, target, o_.num_thresholds);
}

double AUC::result(const std::vector<double>& totals) const {
  const std::size_t t = static_cast<std::size_t>(o_.num_thresholds);
  const double* tp = totals.data();
  const double* fp = tp + t;
  const double* tn = fp + t;
  const double* fn = tn + t;
  double area = 0.0;
  if (curve_ == Curve::pr && summation_ == Summation::interpolation) {
    // Keras' interpolate_pr_auc (Davis & Goadrich): precision interpolated linearly in the
    // number of predicted positives between adjacent thresholds, integrated in closed form.
    for (std::size_t i = 0; i + 1 < t; ++i) {
      const double p0 = tp[i] + fp[i], p1 = tp[i + 1] + fp[i + 1];
      const double dtp = tp[i] - tp[i + 1];
      const double slope = divide_no_nan(dtp, std::max(p0 - p1, 0.0));
      const double intercept = tp[i + 1] - slope * p1;
      const double ratio = p0 > 0 && p1 > 0 ? divide_no_nan(p0, std::max(p1, 0.0)) : 1.0;
      area += divide_no_nan(slope * (dtp + intercept * std::log(ratio)), std::max(tp[i + 1] + fn[i + 1], 0.0));
    }
    return area;
  }
  // Riemann sum of y over x, both functions of the threshold (x decreasing as it rises).
  auto point = [&](std::size_t i) {
    const double recall = divide_no_nan(tp[i], tp[i] + fn[i]);
    if (curve_ == Curve::roc) return std::pair{divide_no_nan(fp[i], fp[i] + tn[i]), recall};
    return std::pair{recall, divide_no_nan(tp[i], tp[i] + fp[i])};
  };
  for (std::size_t i = 0; i + 1 < t; ++i) {
    const auto [x0, y0] = point(i);
    const auto [x1, y1] = point(i + 1);
    const double height = summation_ == Summation::interpolation ? (y0 + y1) / 2.0
                          : summation_ == Summation::minoring    ? std::min(y0, y1)
                                                                 : std::max(y0, y1);
    area += (x0 - x1) * height;
  }
  return area;
}

ConfusionCount::ConfusionCount(Which which, float thresholds, std::string name)
    : which_(which), threshold_(thresholds), name_(std::move(name)) {
  check_options({.thresholds = thresholds}, name_.c_str());
}

std::vector<double> ConfusionCount::shard_totals(Backend& backend, const Tensor& pred, const Tensor& target) const {
  const std::vector<double> c = backend.confusion_counts(pred, target, {threshold_}, 1, 0);  // TP, FP, TN, FN
  return {c[static_cast<std::size_t>(which_)]};
}

RateAtRate::RateAtRate(Rate dependent, Rate constrained, double value, int num_thresholds, int class_id,
                       std::string name)
    : dependent_(dependent),
      constrained_(constrained),
      value_(value),
      num_thresholds_(num_thresholds),
      class_id_(class_id),
      name_(std::move(name)) {
  KERASCPP_CHECK_VALUE(value >= 0 && value <= 1, "{}: the rate to reach must be in [0, 1], got {}", name_, value);
  KERASCPP_CHECK_VALUE(num_thresholds >= 1 && num_thresholds <= (1 << 20),
                       "{}: num_thresholds must be an integer > 0 (and at most 2^20), got {}; the Keras default is 200",
                       name_, num_thresholds);
  check_options({.class_id = class_id}, name_.c_str());
}

std::vector<double> RateAtRate::shard_totals(Backend& backend, const Tensor& pred, const Tensor& target) const {
  // Keras' thresholds: 0, 1/(T−1), …, (T−2)/(T−1), 1 (one threshold: 0.5); pred > t is positive.
  std::vector<float> thresholds(static_cast<std::size_t>(num_thresholds_), 0.5f);
  if (num_thresholds_ > 1)
    for (int i = 0; i < num_thresholds_; ++i)
      thresholds[static_cast<std::size_t>(i)] = static_cast<float>(static_cast<double>(i) / (num_thresholds_ - 1));
  std::int64_t stride = 1, offset = 0;
  if (class_id_ >= 0) {
    KERASCPP_CHECK_VALUE(
        pred.rank() >= 2 && class_id_ < pred.dim(-1),
        "metric '{}': class_id {} needs predictions of shape [N, classes] with more than {} classes, got "
        "{}; pass a class index that exists",
        name_, class_id_, class_id_, shape_str(pred.shape()));
    stride = pred.dim(-1);
    offset = class_id_;
  }
  return backend.confusion_counts(pred, target, thresholds, stride, offset);
}

double RateAtRate::result(const std::vector<double>& totals) const {
  const std::size_t t = static_cast<std::size_t>(num_thresholds_);
  auto rate = [&](Rate r, std::size_t i) {
    const double tp = totals[i], fp = totals[t + i], tn = totals[2 * t + i], fn = totals[3 * t + i];
    switch (r) {
      case Rate::precision:
        return divide_no_nan(tp, tp + fp);
      case Rate::recall:
        return divide_no_nan(tp, tp + fn);
      case Rate::specificity:
        return divide_no_nan(tn, tn + fp);
    }
    return 0.0;
  };
  // Keras' _find_max_under_constraint: max of the dependent rate where the constraint holds, else 0.
  double best = 0.0;
  for (std::size_t i = 0; i < t; ++i)
    if (rate(constrained_, i) >= value_) best = std::max(best, rate(dependent_, i));
  return best;
}

}  // namespace kerascpp::metrics
