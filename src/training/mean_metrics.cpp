// Keras' MeanMetricWrapper and the metrics that are the mean of a per-example value: a loss's
// (MeanSquaredError, Hinge, ...) or a TrainingKernels::row_loss formula's (Accuracy, top-k,
// the correlations). Each shard gives (Σ values, examples), summed over replicas like any metric.
#include <cmath>

#include "check.hpp"
#include "kerascpp/training/metrics.hpp"

namespace kerascpp::metrics {

namespace {

// The per-example values of a row formula (metric values: no gradient); `sign` −1 negates them.
MeanMetricWrapper::Fn row_formula(RowLoss kind, RowLossParams params = {}, float sign = 1.f) {
  return [kind, params, sign](Backend& backend, const Tensor& pred, const Tensor& target, Tensor& values) {
    Tensor no_grad;
    backend.row_loss(kind, params, pred, target, values, no_grad, 1.f);
    if (sign != 1.f) backend.scale(values, sign);
  };
}

}  // namespace

MeanMetricWrapper::MeanMetricWrapper(Fn fn, std::string name) : fn_(std::move(fn)), name_(std::move(name)) {
  KERASCPP_CHECK_VALUE(fn_, "MeanMetricWrapper '{}': the function is empty; pass a callable", name_);
  KERASCPP_CHECK_VALUE(!name_.empty(), "MeanMetricWrapper: the name is empty; give the key for the logs");
}

MeanMetricWrapper::MeanMetricWrapper(const losses::LossRef& loss, std::string name)
    : MeanMetricWrapper(
          [loss](Backend& backend, const Tensor& pred, const Tensor& target, Tensor& values) {
            KERASCPP_CHECK_VALUE(static_cast<bool>(loss), "MeanMetricWrapper: the loss is empty");
            Tensor no_grad;
            loss->compute(backend, pred, target, values, no_grad, 1.f);
          },
          std::move(name)) {}

MetricSums MeanMetricWrapper::shard_sums(Backend& backend, const Tensor& pred, const Tensor& target) const {
  KERASCPP_CHECK_SHAPE(pred.rank() >= 1, "metric '{}': pred is a scalar but must have a batch axis", name_);
  Tensor values({pred.dim(0)}, DType::float32, pred.device());
  fn_(backend, pred, target, values);
  return {backend.sum(values), static_cast<double>(pred.dim(0))};
}

Accuracy::Accuracy(std::string name) : MeanMetricWrapper(row_formula(RowLoss::equal), std::move(name)) {}

namespace {
int checked_k(int k) {
  KERASCPP_CHECK_VALUE(k >= 1, "TopKCategoricalAccuracy: k must be >= 1 (Keras' default 5), got {}", k);
  return k;
}
}  // namespace

TopKCategoricalAccuracy::TopKCategoricalAccuracy(int k, std::string name)
    : MeanMetricWrapper(row_formula(RowLoss::top_k_categorical_hit, RowLossParams{.k = checked_k(k)}),
                        std::move(name)) {}

MeanSquaredError::MeanSquaredError(std::string name) : MeanMetricWrapper(losses::MeanSquaredError(), std::move(name)) {}

RootMeanSquaredError::RootMeanSquaredError(std::string name)
    : MeanMetricWrapper(losses::MeanSquaredError(), std::move(name)) {}

double RootMeanSquaredError::result(const std::vector<double>& totals) const {
  return std::sqrt(MeanMetricWrapper::result(totals));
}

MeanAbsolutePercentageError::MeanAbsolutePercentageError(std::string name)
    : MeanMetricWrapper(losses::MeanAbsolutePercentageError(), std::move(name)) {}
MeanSquaredLogarithmicError::MeanSquaredLogarithmicError(std::string name)
    : MeanMetricWrapper(losses::MeanSquaredLogarithmicError(), std::move(name)) {}
LogCoshError::LogCoshError(std::string name) : MeanMetricWrapper(losses::LogCosh(), std::move(name)) {}
CosineSimilarity::CosineSimilarity(std::string name)
    : MeanMetricWrapper(row_formula(RowLoss::cosine_similarity, {}, -1.f), std::move(name)) {}
Poisson::Poisson(std::string name) : MeanMetricWrapper(losses::Poisson(), std::move(name)) {}
KLDivergence::KLDivergence(std::string name) : MeanMetricWrapper(losses::KLDivergence(), std::move(name)) {}
Hinge::Hinge(std::string name) : MeanMetricWrapper(losses::Hinge(), std::move(name)) {}
SquaredHinge::SquaredHinge(std::string name) : MeanMetricWrapper(losses::SquaredHinge(), std::move(name)) {}
CategoricalHinge::CategoricalHinge(std::string name) : MeanMetricWrapper(losses::CategoricalHinge(), std::move(name)) {}
BinaryCrossentropy::BinaryCrossentropy(losses::CrossentropyOptions o, std::string name)
    : MeanMetricWrapper(losses::BinaryCrossentropy(o), std::move(name)) {}
CategoricalCrossentropy::CategoricalCrossentropy(losses::CrossentropyOptions o, std::string name)
    : MeanMetricWrapper(losses::CategoricalCrossentropy(o), std::move(name)) {}
SparseCategoricalCrossentropy::SparseCategoricalCrossentropy(bool from_logits, std::string name)
    : MeanMetricWrapper(losses::SparseCategoricalCrossentropy({.from_logits = from_logits}), std::move(name)) {}
PearsonCorrelation::PearsonCorrelation(std::string name)
    : MeanMetricWrapper(row_formula(RowLoss::pearson_correlation), std::move(name)) {}
ConcordanceCorrelation::ConcordanceCorrelation(std::string name)
    : MeanMetricWrapper(row_formula(RowLoss::concordance_correlation), std::move(name)) {}

MetricSums Sum::shard_sums(Backend& backend, const Tensor& pred, const Tensor&) const {
  return {backend.sum(pred), 0.0};
}

MetricSums Mean::shard_sums(Backend& backend, const Tensor& pred, const Tensor&) const {
  return {backend.sum(pred), static_cast<double>(pred.numel())};
}

}  // namespace kerascpp::metrics
