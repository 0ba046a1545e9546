#include "kerascpp/losses.hpp"

#include <fmt/format.h>

#include <cmath>

#include "check.hpp"

namespace kerascpp::losses {

LossRef::LossRef(const char* name) : LossRef(std::string(name)) {}

LossRef::LossRef(const std::string& name) {
  if (name == "sparse_categorical_crossentropy") loss_ = std::make_shared<SparseCategoricalCrossentropy>();
  else if (name == "categorical_crossentropy") loss_ = std::make_shared<CategoricalCrossentropy>();
  else if (name == "binary_crossentropy") loss_ = std::make_shared<BinaryCrossentropy>();
  else if (name == "mean_squared_error" || name == "mse") loss_ = std::make_shared<MeanSquaredError>();
  else if (name == "huber") loss_ = std::make_shared<Huber>();
  else
    throw ValueError(
        fmt::format("unknown loss '{}'; use sparse_categorical_crossentropy, categorical_crossentropy, "
                    "binary_crossentropy, mean_squared_error or huber",
                    name));
}

namespace {

CrossentropyOptions checked(CrossentropyOptions o, const char* loss, bool smoothing_allowed) {
  KERASCPP_CHECK(smoothing_allowed || o.label_smoothing == 0.0, ValueError,
                 "{}: label_smoothing needs one-hot targets; use CategoricalCrossentropy with one-hot labels", loss);
  KERASCPP_CHECK(o.label_smoothing >= 0.0 && o.label_smoothing <= 1.0, ValueError,
                 "{}: label_smoothing must be in [0, 1] (0: none; 0.1 is common), got {}", loss, o.label_smoothing);
  return o;
}

// t·(1 − s) + offset, a new tensor on the targets' device (the dataset's targets stay untouched).
Tensor smoothed(Backend& backend, const Tensor& target, double s, double offset) {
  KERASCPP_CHECK(target.dtype() == DType::float32, ValueError,
                 "label_smoothing needs float32 targets (one-hot or 0/1 values), got {}", dtype_name(target.dtype()));
  Tensor t = target.clone();
  backend.scale(t, static_cast<float>(1.0 - s));
  Tensor shift(t.shape(), DType::float32, t.device());
  shift.fill(static_cast<float>(offset));
  backend.add_inplace(t, shift);
  return t;
}

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
  backend.categorical_crossentropy(pred, smoothed(backend, target, s, s / classes), options_.from_logits, loss, grad,
                                   grad_scale);
}

BinaryCrossentropy::BinaryCrossentropy(CrossentropyOptions o) : options_(checked(o, "BinaryCrossentropy", true)) {}

void BinaryCrossentropy::compute(Backend& backend, const Tensor& pred, const Tensor& target, Tensor& loss, Tensor& grad,
                                 float grad_scale) const {
  const double s = options_.label_smoothing;
  if (s == 0.0) {
    backend.binary_crossentropy(pred, target, options_.from_logits, loss, grad, grad_scale);
    return;
  }
  backend.binary_crossentropy(pred, smoothed(backend, target, s, 0.5 * s), options_.from_logits, loss, grad,
                              grad_scale);
}

Huber::Huber(double delta) : delta_(delta) {
  KERASCPP_CHECK(std::isfinite(delta) && delta > 0, ValueError,
                 "Huber: delta must be a finite number > 0 (where the loss turns from quadratic to linear; Keras' "
                 "default 1.0), got {}",
                 delta);
}

}  // namespace kerascpp::losses
