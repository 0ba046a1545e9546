// Precision, Recall and AUC: each shard contributes confusion-matrix counts (Backend ops), the
// engine adds them over replicas, batches and workers like any metric's totals, and result()
// applies Keras' formula to the summed counts, so 1 or N replicas give the same value.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "check.hpp"
#include "kerascpp/metrics.hpp"

namespace kerascpp::metrics {

namespace {

// Keras' ops.divide_no_nan.
double divide_no_nan(double a, double b) { return b == 0.0 ? 0.0 : a / b; }

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

void check_options(const PrecisionRecallOptions& o, const char* metric) {
  KERASCPP_CHECK(o.thresholds >= 0.f && o.thresholds <= 1.f, ValueError,
                 "{}: thresholds must be in [0, 1] (as in Keras), got {}; the default is 0.5", metric, o.thresholds);
  KERASCPP_CHECK(o.class_id >= -1, ValueError,
                 "{}: class_id must be a class index >= 0, or -1 for every element, got {}", metric, o.class_id);
}

// (TP, FP, TN, FN) of one shard at the metric's threshold.
std::vector<double> counts_at_threshold(Backend& backend, const Tensor& pred, const Tensor& target,
                                        const PrecisionRecallOptions& o, const std::string& metric) {
  std::int64_t stride = 1, offset = 0;
  if (o.class_id >= 0) {
    KERASCPP_CHECK(pred.rank() >= 2 && o.class_id < pred.dim(-1), ValueError,
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
  KERASCPP_CHECK(o_.num_thresholds >= 2 && o_.num_thresholds <= (1 << 20), ValueError,
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

}  // namespace kerascpp::metrics
