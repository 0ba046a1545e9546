#include "training/metrics.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "check.hpp"

namespace kerascpp {
namespace metrics {

// Each built-in does exactly the Backend calls and divisions of the former closed switch, so
// the logged numbers are unchanged bit for bit.

MetricSums SparseCategoricalAccuracy::shard_sums(Backend& backend, const Tensor& pred, const Tensor& target) const {
  return {backend.sparse_categorical_accuracy_sum(pred, target), static_cast<double>(pred.dim(0))};
}

SparseTopKCategoricalAccuracy::SparseTopKCategoricalAccuracy(int k, std::string name) : k_(k), name_(std::move(name)) {
  KERASCPP_CHECK_VALUE(k >= 1, "SparseTopKCategoricalAccuracy: k must be >= 1 (Keras' default 5), got {}", k);
}

MetricSums SparseTopKCategoricalAccuracy::shard_sums(Backend& backend, const Tensor& pred, const Tensor& target) const {
  return {backend.sparse_top_k_accuracy_sum(pred, target, k_), static_cast<double>(pred.dim(0))};
}

MetricSums CategoricalAccuracy::shard_sums(Backend& backend, const Tensor& pred, const Tensor& target) const {
  return {backend.categorical_accuracy_sum(pred, target), static_cast<double>(pred.dim(0))};
}

MetricSums BinaryAccuracy::shard_sums(Backend& backend, const Tensor& pred, const Tensor& target) const {
  // Keras averages over every element (per example over the last axis, then over examples).
  double rows = static_cast<double>(pred.dim(0));
  double per_row = pred.dim(0) ? static_cast<double>(pred.numel()) / rows : 1;
  return {backend.binary_accuracy_sum(pred, target, 0.5f) / per_row, rows};
}

MetricSums MeanAbsoluteError::shard_sums(Backend& backend, const Tensor& pred, const Tensor& target) const {
  double rows = static_cast<double>(pred.dim(0));
  double per_row = pred.dim(0) ? static_cast<double>(pred.numel()) / rows : 1;
  return {backend.absolute_error_sum(pred, target) / per_row, rows};
}

}  // namespace metrics

namespace detail {
namespace {

std::shared_ptr<const metrics::Metric> metric_for_name(const std::string& name, const losses::Loss* loss,
                                                       int output_width) {
  if (name == "accuracy" || name == "acc") {
    auto kind = loss ? loss->accuracy_kind() : losses::Loss::AccuracyKind::categorical;
    switch (kind) {
      case losses::Loss::AccuracyKind::sparse_categorical:
        return std::make_shared<metrics::SparseCategoricalAccuracy>(name);
      case losses::Loss::AccuracyKind::binary:
        return std::make_shared<metrics::BinaryAccuracy>(name);
      case losses::Loss::AccuracyKind::categorical:
        return std::make_shared<metrics::CategoricalAccuracy>(name);
    }
  }
  using namespace metrics;
  // Keras' names: the snake_case of each class that Keras can make with its defaults, and the
  // short aliases of the loss-named ones.
  if (name == "sparse_categorical_accuracy") return std::make_shared<SparseCategoricalAccuracy>(name);
  if (name == "categorical_accuracy") return std::make_shared<CategoricalAccuracy>(name);
  if (name == "sparse_top_k_categorical_accuracy") return std::make_shared<SparseTopKCategoricalAccuracy>(5, name);
  if (name == "top_k_categorical_accuracy") return std::make_shared<TopKCategoricalAccuracy>(5, name);
  if (name == "binary_accuracy") return std::make_shared<BinaryAccuracy>(name);
  if (name == "mae" || name == "mean_absolute_error") return std::make_shared<MeanAbsoluteError>(name);
  if (name == "mse" || name == "mean_squared_error") return std::make_shared<MeanSquaredError>(name);
  if (name == "root_mean_squared_error") return std::make_shared<RootMeanSquaredError>(name);
  if (name == "mape" || name == "mean_absolute_percentage_error")
    return std::make_shared<MeanAbsolutePercentageError>(name);
  if (name == "msle" || name == "mean_squared_logarithmic_error")
    return std::make_shared<MeanSquaredLogarithmicError>(name);
  if (name == "logcosh" || name == "log_cosh_error") return std::make_shared<LogCoshError>(name);
  if (name == "cosine_similarity") return std::make_shared<CosineSimilarity>(name);
  // Keras' R2Score takes any number of outputs (it builds on the first batch).
  if (name == "r2_score") return std::make_shared<R2Score>(R2ScoreOptions{.num_outputs = output_width}, name);
  if (name == "poisson") return std::make_shared<Poisson>(name);
  if (name == "kld" || name == "kl_divergence") return std::make_shared<KLDivergence>(name);
  if (name == "hinge") return std::make_shared<Hinge>(name);
  if (name == "squared_hinge") return std::make_shared<SquaredHinge>(name);
  if (name == "categorical_hinge") return std::make_shared<CategoricalHinge>(name);
  if (name == "binary_crossentropy") return std::make_shared<BinaryCrossentropy>(losses::CrossentropyOptions{}, name);
  if (name == "categorical_crossentropy")
    return std::make_shared<CategoricalCrossentropy>(losses::CrossentropyOptions{}, name);
  if (name == "sparse_categorical_crossentropy") return std::make_shared<SparseCategoricalCrossentropy>(false, name);
  if (name == "pearson_correlation") return std::make_shared<PearsonCorrelation>(name);
  if (name == "concordance_correlation") return std::make_shared<ConcordanceCorrelation>(name);
  if (name == "sum") return std::make_shared<Sum>(name);
  if (name == "mean") return std::make_shared<Mean>(name);
  if (name == "true_positives") return std::make_shared<TruePositives>(0.5f, name);
  if (name == "false_positives") return std::make_shared<FalsePositives>(0.5f, name);
  if (name == "true_negatives") return std::make_shared<TrueNegatives>(0.5f, name);
  if (name == "false_negatives") return std::make_shared<FalseNegatives>(0.5f, name);
  if (name == "precision") return std::make_shared<Precision>(PrecisionRecallOptions{}, name);
  if (name == "recall") return std::make_shared<Recall>(PrecisionRecallOptions{}, name);
  if (name == "auc") return std::make_shared<AUC>(AUCOptions{}, name);
  throw ValueError(
      fmt::format("unknown metric '{}'; use a Keras metric name (accuracy, mae, mse, auc, precision, ...: the list "
                  "is in docs/training_and_evaluation.md) or pass a kerascpp::metrics::Metric object (metrics that "
                  "need arguments, like F1Score or MeanIoU, are passed as objects)",
                  name));
}

}  // namespace

metrics::MetricSums OutputSizedMetric::shard_sums(Backend&, const Tensor&, const Tensor&) const {
  throw StateError(fmt::format("metric '{}' is sized by compile(), which replaces it; it cannot run itself", name_));
}

MetricSpec resolve_metric(const metrics::MetricRef& ref, const losses::Loss* loss, int output_width) {
  if (const auto* sized = dynamic_cast<const OutputSizedMetric*>(ref.metric().get()))
    return {sized->name(), sized->make(std::max(output_width, 1))};
  if (ref.metric()) {
    std::string name = ref.metric()->name();
    KERASCPP_CHECK_VALUE(!name.empty(),
                         "compile(): a custom metric's name() is empty; return the key it should have in the logs");
    return {name, ref.metric()};
  }
  KERASCPP_CHECK_VALUE(!ref.name().empty(),
                       "compile(): an empty metric in CompileOptions::metrics; give a Keras name (\"accuracy\") or a "
                       "kerascpp::metrics::Metric object");
  return {ref.name(), metric_for_name(ref.name(), loss, std::max(output_width, 1))};
}

std::vector<double> metric_totals(Backend& backend, const MetricSpec& spec, const Tensor& pred, const Tensor& target) {
  std::vector<double> t = spec.metric->shard_totals(backend, pred, target);
  KERASCPP_CHECK_VALUE(t.size() == spec.metric->num_totals(),
                       "metric '{}': shard_totals() returned {} values but num_totals() is {}; make them agree",
                       spec.name, t.size(), spec.metric->num_totals());
  return t;
}

}  // namespace detail
}  // namespace kerascpp
