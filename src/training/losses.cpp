#include "kerascpp/training/losses.hpp"

#include <fmt/format.h>

#include <cmath>

#include "check.hpp"
#include "training/loss_targets.hpp"

namespace kerascpp::losses {

LossRef::LossRef(const char* name) : LossRef(std::string(name)) {}

LossRef::LossRef(const std::string& name) {
  // Keras' names (keras.losses.get), with its short aliases.
  if (name == "sparse_categorical_crossentropy") loss_ = std::make_shared<SparseCategoricalCrossentropy>();
  else if (name == "categorical_crossentropy") loss_ = std::make_shared<CategoricalCrossentropy>();
  else if (name == "binary_crossentropy" || name == "bce" || name == "BCE")
    loss_ = std::make_shared<BinaryCrossentropy>();
  else if (name == "mean_squared_error" || name == "mse" || name == "MSE") loss_ = std::make_shared<MeanSquaredError>();
  else if (name == "huber") loss_ = std::make_shared<Huber>();
  else if (name == "mean_absolute_error" || name == "mae" || name == "MAE")
    loss_ = std::make_shared<MeanAbsoluteError>();
  else if (name == "mean_absolute_percentage_error" || name == "mape" || name == "MAPE")
    loss_ = std::make_shared<MeanAbsolutePercentageError>();
  else if (name == "mean_squared_logarithmic_error" || name == "msle" || name == "MSLE")
    loss_ = std::make_shared<MeanSquaredLogarithmicError>();
  else if (name == "cosine_similarity") loss_ = std::make_shared<CosineSimilarity>();
  else if (name == "log_cosh" || name == "logcosh") loss_ = std::make_shared<LogCosh>();
  else if (name == "poisson") loss_ = std::make_shared<Poisson>();
  else if (name == "kl_divergence" || name == "kld" || name == "KLD") loss_ = std::make_shared<KLDivergence>();
  else if (name == "hinge") loss_ = std::make_shared<Hinge>();
  else if (name == "squared_hinge") loss_ = std::make_shared<SquaredHinge>();
  else if (name == "categorical_hinge") loss_ = std::make_shared<CategoricalHinge>();
  else if (name == "binary_focal_crossentropy") loss_ = std::make_shared<BinaryFocalCrossentropy>();
  else if (name == "categorical_focal_crossentropy") loss_ = std::make_shared<CategoricalFocalCrossentropy>();
  else if (name == "categorical_generalized_cross_entropy")
    loss_ = std::make_shared<CategoricalGeneralizedCrossEntropy>();
  else if (name == "tversky") loss_ = std::make_shared<Tversky>();
  else if (name == "dice") loss_ = std::make_shared<Dice>();
  else if (name == "circle") loss_ = std::make_shared<Circle>();
  else if (name == "ctc") loss_ = std::make_shared<CTC>();
  else
    throw ValueError(fmt::format(
        "unknown loss '{}'; use a Keras loss name (sparse_categorical_crossentropy, categorical_crossentropy, "
        "binary_crossentropy, mean_squared_error, mean_absolute_error, huber, kl_divergence, poisson, hinge, ...: "
        "the list is in docs/training_and_evaluation.md) or pass a kerascpp::losses::Loss object",
        name));
}

namespace {

CrossentropyOptions checked(CrossentropyOptions o, const char* loss, bool smoothing_allowed) {
  KERASCPP_CHECK_VALUE(smoothing_allowed || o.label_smoothing == 0.0,
                       "{}: label_smoothing needs one-hot targets; use CategoricalCrossentropy with one-hot labels",
                       loss);
  detail::check_label_smoothing(o.label_smoothing, loss);
  return o;
}

using detail::smoothed_targets;

}  // namespace

SparseCategoricalCrossentropy::SparseCategoricalCrossentropy(CrossentropyOptions o)
    : options_(checked(o, "SparseCategoricalCrossentropy", false)) {}

CategoricalCrossentropy::CategoricalCrossentropy(CrossentropyOptions o)
    : options_(checked(o, "CategoricalCrossentropy", true)) {}

void CategoricalCrossentropy::compute(Backend& backend, const Tensor& pred, const Tensor& target, Tensor& loss,
                                      Tensor& grad, float grad_scale) const {
  const double s = options_.label_smoothing;
  if (s == 0.0 || pred.rank() == 0) {
    backend.categorical_crossentropy(pred, target, options_.from_logits, loss, grad, grad_scale);
    return;
  }
  const double classes = static_cast<double>(pred.dim(pred.rank() - 1));
  backend.categorical_crossentropy(pred, smoothed_targets(backend, target, s, s / classes), options_.from_logits, loss,
                                   grad, grad_scale);
}

BinaryCrossentropy::BinaryCrossentropy(CrossentropyOptions o) : options_(checked(o, "BinaryCrossentropy", true)) {}

void BinaryCrossentropy::compute(Backend& backend, const Tensor& pred, const Tensor& target, Tensor& loss, Tensor& grad,
                                 float grad_scale) const {
  const double s = options_.label_smoothing;
  if (s == 0.0) {
    backend.binary_crossentropy(pred, target, options_.from_logits, loss, grad, grad_scale);
    return;
  }
  backend.binary_crossentropy(pred, smoothed_targets(backend, target, s, 0.5 * s), options_.from_logits, loss, grad,
                              grad_scale);
}

Huber::Huber(double delta) : delta_(delta) {
  KERASCPP_CHECK_VALUE(
      std::isfinite(delta) && delta > 0,
      "Huber: delta must be a finite number > 0 (where the loss turns from quadratic to linear; Keras' "
      "default 1.0), got {}",
      delta);
}

}  // namespace kerascpp::losses
