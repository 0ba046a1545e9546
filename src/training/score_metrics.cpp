// R2Score, FBetaScore/F1Score and the IoU family: metrics whose totals are per-output or
// per-class tables (sums per column, TP/FP/FN per class, a class-by-class confusion matrix),
// summed over replicas, batches and workers like every metric's totals; result() applies
// Keras' formula to the summed tables.
//
// Their shard totals are tallied on the host: they are scatters by class id or per-column sums
// in double that no Backend op provides, and a shard's predictions are small next to the wait
// every metric already has for its totals (one copy per shard on a GPU, none on the CPU).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "check.hpp"
#include "kerascpp/training/metrics.hpp"

namespace kerascpp::metrics {

namespace {

constexpr double kEpsilon = 1e-7;  // Keras' backend.epsilon()

// pred and target as [rows, cols] float values on the host (integer targets converted).
struct HostRows {
  std::vector<float> pred, target;
  std::int64_t rows = 0, cols = 0;
};

HostRows host_rows(const Tensor& pred, const Tensor& target, const std::string& metric) {
  KERASCPP_CHECK_SHAPE(pred.rank() >= 1 && target.numel() == pred.numel(),
                       "metric '{}': target {} must have pred {}'s values (one per prediction)", metric,
                       shape_str(target.shape()), shape_str(pred.shape()));
  HostRows h;
  h.cols = pred.rank() >= 2 ? pred.dim(-1) : 1;
  h.rows = h.cols ? pred.numel() / h.cols : 0;
  h.pred = pred.to_vector();
  h.target = target.to_vector();
  return h;
}

std::int64_t argmax(const float* v, std::int64_t n) {
  return static_cast<std::int64_t>(std::max_element(v, v + n) - v);  // first maximum, as numpy
}

}  // namespace

// ------------------------------------------------------------------------------------ R2Score

R2Score::R2Score(R2ScoreOptions o, std::string name) : o_(std::move(o)), name_(std::move(name)) {
  KERASCPP_CHECK_VALUE(
      o_.class_aggregation == "uniform_average" || o_.class_aggregation == "variance_weighted_average",
      "R2Score: class_aggregation must be \"uniform_average\" or \"variance_weighted_average\" (None, one "
      "value per output, is not supported: logs hold one number per metric), got \"{}\"",
      o_.class_aggregation);
  KERASCPP_CHECK_VALUE(o_.num_regressors >= 0, "R2Score: num_regressors must be >= 0, got {}", o_.num_regressors);
  KERASCPP_CHECK_VALUE(o_.num_outputs >= 1, "R2Score: num_outputs must be >= 1, got {}", o_.num_outputs);
}

MetricSums R2Score::shard_sums(Backend&, const Tensor&, const Tensor&) const {
  throw StateError(fmt::format("metric '{}' keeps per-output totals: call shard_totals() and result()", name_));
}

std::vector<double> R2Score::shard_totals(Backend&, const Tensor& pred, const Tensor& target) const {
  const HostRows h = host_rows(pred, target, name_);
  KERASCPP_CHECK_SHAPE(
      h.cols == o_.num_outputs,
      "metric '{}': predictions {} have {} outputs but R2ScoreOptions::num_outputs is {}; set it to {}", name_,
      shape_str(pred.shape()), h.cols, o_.num_outputs, h.cols);
  const std::size_t C = static_cast<std::size_t>(h.cols);
  std::vector<double> t(num_totals(), 0.0);
  for (std::int64_t r = 0; r < h.rows; ++r)
    for (std::size_t c = 0; c < C; ++c) {
      const double y = h.target[static_cast<std::size_t>(r) * C + c], p = h.pred[static_cast<std::size_t>(r) * C + c];
      t[c] += y;
      t[C + c] += y * y;
      t[2 * C + c] += (y - p) * (y - p);
    }
  t[3 * C] = static_cast<double>(h.rows);               // Keras' count (per output, all equal)
  t[3 * C + 1] = static_cast<double>(h.rows) * h.cols;  // Keras' num_samples: every value
  return t;
}

double R2Score::result(const std::vector<double>& t) const {
  const std::size_t C = static_cast<std::size_t>(o_.num_outputs);
  const double count = t[3 * C], samples = t[3 * C + 1];
  double score = 0.0, weighted = 0.0, weights = 0.0;
  for (std::size_t c = 0; c < C; ++c) {
    const double mean = t[c] / count;
    const double total = t[C + c] - t[c] * mean;
    double raw = 1.0 - t[2 * C + c] / total;
    if (std::isinf(raw)) raw = 0.0;  // Keras: a constant target with errors scores 0
    score += raw / static_cast<double>(C);
    weighted += total * raw;
    weights += total;
  }
  if (o_.class_aggregation == "variance_weighted_average") score = weighted / weights;
  const double n = samples, p = o_.num_regressors;
  // Keras falls back to the plain R² (with a warning) when there are too few samples.
  if (p != 0 && p < n - 1) score = 1.0 - (1.0 - score) * (n - 1.0) / (n - p - 1.0);
  return score;
}

// -------------------------------------------------------------------------------- FBetaScore

FBetaScore::FBetaScore(FBetaOptions o, std::string name) : o_(std::move(o)), name_(std::move(name)) {
  KERASCPP_CHECK_VALUE(o_.average == "micro" || o_.average == "macro" || o_.average == "weighted",
                       "{}: average must be \"micro\", \"macro\" or \"weighted\" (None, one value per class, is not "
                       "supported: logs hold one number per metric), got \"{}\"",
                       name_, o_.average);
  KERASCPP_CHECK_VALUE(o_.beta > 0, "{}: beta must be > 0, got {}", name_, o_.beta);
  KERASCPP_CHECK_VALUE(!o_.threshold || (*o_.threshold > 0 && *o_.threshold <= 1),
                       "{}: threshold must verify 0 < threshold <= 1, got {}", name_, o_.threshold.value_or(0));
  KERASCPP_CHECK_VALUE(o_.num_classes >= 1, "{}: num_classes must be >= 1, got {}", name_, o_.num_classes);
}

std::vector<double> FBetaScore::shard_totals(Backend&, const Tensor& pred, const Tensor& target) const {
  KERASCPP_CHECK_SHAPE(
      pred.rank() == 2 && target.shape() == pred.shape(),
      "metric '{}': expects 2D inputs (batch_size, output_dim) of one shape, got pred {} and target {}", name_,
      shape_str(pred.shape()), shape_str(target.shape()));
  const HostRows h = host_rows(pred, target, name_);
  KERASCPP_CHECK_SHAPE(h.cols == o_.num_classes,
                       "metric '{}': predictions {} have {} classes but FBetaOptions::num_classes is {}; set it to {}",
                       name_, shape_str(pred.shape()), h.cols, o_.num_classes, h.cols);
  const std::size_t C = static_cast<std::size_t>(h.cols);
  std::vector<double> t(3 * C, 0.0);
  for (std::int64_t r = 0; r < h.rows; ++r) {
    const float* p = h.pred.data() + r * h.cols;
    const float* y = h.target.data() + r * h.cols;
    const float top = *std::max_element(p, p + h.cols);
    for (std::size_t c = 0; c < C; ++c) {
      // Keras: the row's largest score (not a zero one) without a threshold, else pred > threshold.
      const bool positive =
          o_.threshold ? p[c] > static_cast<float>(*o_.threshold) : p[c] >= top && std::fabs(p[c]) > 1e-9f;
      const double yc = y[c];
      t[c] += positive ? yc : 0.0;            // TP
      t[C + c] += positive ? 1.0 - yc : 0.0;  // FP
      t[2 * C + c] += positive ? 0.0 : yc;    // FN
    }
  }
  return t;
}

double FBetaScore::result(const std::vector<double>& t) const {
  const std::size_t C = static_cast<std::size_t>(o_.num_classes);
  const double b2 = o_.beta * o_.beta;
  auto score = [&](double tp, double fp, double fn) {
    const double precision = tp / (tp + fp + kEpsilon), recall = tp / (tp + fn + kEpsilon);
    return precision * recall / (b2 * precision + recall + kEpsilon) * (1.0 + b2);
  };
  if (o_.average == "micro") {
    double tp = 0, fp = 0, fn = 0;
    for (std::size_t c = 0; c < C; ++c) tp += t[c], fp += t[C + c], fn += t[2 * C + c];
    return score(tp, fp, fn);
  }
  double sum = 0.0, weighted = 0.0, weights = 0.0;
  for (std::size_t c = 0; c < C; ++c) {
    const double f = score(t[c], t[C + c], t[2 * C + c]);
    const double w = t[c] + t[2 * C + c];  // Σ target of the class (Keras' intermediate_weights)
    sum += f;
    weighted += f * w;
    weights += w;
  }
  return o_.average == "weighted" ? weighted / (weights + kEpsilon) : sum / static_cast<double>(C);
}

F1Score::F1Score(FBetaOptions o, std::string name)
    : FBetaScore(
          [&] {
            KERASCPP_CHECK_VALUE(o.beta == 1.0, "F1Score: beta is 1 by definition (use FBetaScore), got {}", o.beta);
            return o;
          }(),
          std::move(name)) {}

// --------------------------------------------------------------------------------------- IoU

IoU::IoU(int num_classes, std::vector<int> target_class_ids, IoUOptions o, std::string name)
    : num_classes_(num_classes), target_class_ids_(std::move(target_class_ids)), o_(o), name_(std::move(name)) {
  // The upper bound keeps the C² totals (which cross workers every step) reasonable.
  KERASCPP_CHECK_VALUE(num_classes_ >= 1 && num_classes_ <= 4096, "{}: num_classes must be in [1, 4096], got {}", name_,
                       num_classes_);
  KERASCPP_CHECK_VALUE(!target_class_ids_.empty(), "{}: target_class_ids is empty; name the classes to average", name_);
  for (int id : target_class_ids_)
    KERASCPP_CHECK_VALUE(id >= 0 && id < num_classes_, "{}: target class id {} is out of range, which is [0, {})",
                         name_, id, num_classes_);
}

std::vector<double> IoU::shard_totals(Backend&, const Tensor& pred, const Tensor& target) const {
  const std::int64_t C = num_classes_;
  auto rows_of = [&](const Tensor& t, bool sparse, const char* arg) {
    if (sparse) return t.numel();
    KERASCPP_CHECK_SHAPE(t.rank() >= 2, "metric '{}': {} {} must be (batch, ..., classes) scores or one-hot", name_,
                         arg, shape_str(t.shape()));
    return t.numel() / t.dim(-1);
  };
  const std::int64_t n_true = rows_of(target, o_.sparse_y_true, "target");
  const std::int64_t n_pred = rows_of(pred, o_.sparse_y_pred, "pred");
  KERASCPP_CHECK_SHAPE(n_true == n_pred,
                       "metric '{}': target {} gives {} class ids but pred {} gives {}; they must match", name_,
                       shape_str(target.shape()), n_true, shape_str(pred.shape()), n_pred);
  const std::vector<float> p = pred.to_vector(), y = target.to_vector();
  // Keras' class ids: argmax of one-hot rows and scores, else the values cast to int.
  auto ids = [](const std::vector<float>& v, std::int64_t n, bool sparse, float threshold) {
    std::vector<std::int64_t> out(static_cast<std::size_t>(n));
    const std::int64_t width = n ? static_cast<std::int64_t>(v.size()) / n : 0;
    for (std::int64_t i = 0; i < n; ++i) {
      const float x = v[static_cast<std::size_t>(i)];
      if (!sparse) out[i] = argmax(v.data() + i * width, width);
      else if (threshold >= 0) out[i] = x >= threshold ? 1 : 0;
      else out[i] = std::isfinite(x) ? static_cast<std::int64_t>(x) : -1;
    }
    return out;
  };
  const std::vector<std::int64_t> t_ids = ids(y, n_true, o_.sparse_y_true, -1.f);
  const std::vector<std::int64_t> p_ids = ids(p, n_pred, o_.sparse_y_pred, threshold_);
  std::vector<double> cm(num_totals(), 0.0);
  for (std::size_t i = 0; i < t_ids.size(); ++i) {
    const std::int64_t a = t_ids[i], b = p_ids[i];
    if (a < 0 || a >= C || b < 0 || b >= C || a == o_.ignore_class) continue;  // Keras' bounds mask
    cm[static_cast<std::size_t>(a * C + b)] += 1.0;
  }
  return cm;
}

double IoU::result(const std::vector<double>& cm) const {
  const std::size_t C = static_cast<std::size_t>(num_classes_);
  double sum = 0.0, valid = 0.0;
  for (int id : target_class_ids_) {
    const std::size_t k = static_cast<std::size_t>(id);
    double predicted = 0.0, actual = 0.0;
    for (std::size_t j = 0; j < C; ++j) {
      predicted += cm[j * C + k];
      actual += cm[k * C + j];
    }
    const double tp = cm[k * C + k], den = predicted + actual - tp;
    if (den > 1e-9) {
      sum += tp / (den + kEpsilon);
      valid += 1.0;
    }
  }
  return sum / (valid + kEpsilon);
}

namespace {
std::vector<int> all_classes(int n) {
  std::vector<int> ids(static_cast<std::size_t>(std::max(n, 0)));
  for (int i = 0; i < n; ++i) ids[static_cast<std::size_t>(i)] = i;
  return ids;
}
}  // namespace

MeanIoU::MeanIoU(int num_classes, IoUOptions o, std::string name)
    : IoU(num_classes, all_classes(num_classes), o, std::move(name)) {}

BinaryIoU::BinaryIoU(std::vector<int> target_class_ids, float threshold, std::string name)
    : IoU(2, std::move(target_class_ids), {}, std::move(name)) {
  KERASCPP_CHECK_VALUE(threshold >= 0.f && threshold <= 1.f, "{}: threshold must be in [0, 1], got {}", name_,
                       threshold);
  threshold_ = threshold;
}

OneHotIoU::OneHotIoU(int num_classes, std::vector<int> target_class_ids, int ignore_class, std::string name)
    : IoU(num_classes, std::move(target_class_ids),
          {.ignore_class = ignore_class, .sparse_y_true = false, .sparse_y_pred = false}, std::move(name)) {}

OneHotMeanIoU::OneHotMeanIoU(int num_classes, int ignore_class, std::string name)
    : IoU(num_classes, all_classes(num_classes),
          {.ignore_class = ignore_class, .sparse_y_true = false, .sparse_y_pred = false}, std::move(name)) {}

}  // namespace kerascpp::metrics
