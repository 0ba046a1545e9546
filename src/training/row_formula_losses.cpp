// The losses added on TrainingKernels::row_loss (each one formula of kerascpp/backend/row_loss.hpp) and
// the two overlap losses of whole shards (Tversky, Dice), composed of Backend sums.
#include <cmath>

#include "check.hpp"
#include "kerascpp/training/losses.hpp"
#include "training/loss_targets.hpp"

namespace kerascpp::losses {

CosineSimilarity::CosineSimilarity(int axis) : RowFormulaLoss(RowLoss::cosine_similarity) {
  KERASCPP_CHECK_VALUE(axis == -1,
                       "CosineSimilarity: axis {} is not supported; kerascpp computes it over the last axis (axis=-1, "
                       "Keras' default): move the compared axis last",
                       axis);
}

void Hinge::compute(Backend& backend, const Tensor& pred, const Tensor& target, Tensor& loss, Tensor& grad,
                    float grad_scale) const {
  backend.row_loss(kind_, params_, pred, detail::hinge_targets(backend, target), loss, grad, grad_scale);
}

namespace {

RowLossParams focal_params(const FocalOptions& o, const char* loss) {
  KERASCPP_CHECK_VALUE(
      std::isfinite(o.alpha) && std::isfinite(o.gamma) && o.gamma >= 0,
      "{}: alpha must be finite and gamma finite and >= 0 (Keras' defaults 0.25 and 2.0), got alpha={} "
      "gamma={}",
      loss, o.alpha, o.gamma);
  detail::check_label_smoothing(o.label_smoothing, loss);
  return RowLossParams{.alpha = static_cast<float>(o.alpha),
                       .gamma = static_cast<float>(o.gamma),
                       .from_logits = o.from_logits,
                       .apply_class_balancing = o.apply_class_balancing};
}

}  // namespace

BinaryFocalCrossentropy::BinaryFocalCrossentropy(FocalOptions o)
    : RowFormulaLoss(RowLoss::binary_focal_crossentropy, focal_params(o, "BinaryFocalCrossentropy")), options_(o) {}

void BinaryFocalCrossentropy::compute(Backend& backend, const Tensor& pred, const Tensor& target, Tensor& loss,
                                      Tensor& grad, float grad_scale) const {
  const double s = options_.label_smoothing;
  if (s == 0.0) return backend.row_loss(kind_, params_, pred, target, loss, grad, grad_scale);
  backend.row_loss(kind_, params_, pred, detail::smoothed_targets(backend, target, s, 0.5 * s), loss, grad, grad_scale);
}

CategoricalFocalCrossentropy::CategoricalFocalCrossentropy(FocalOptions o)
    : RowFormulaLoss(RowLoss::categorical_focal_crossentropy, focal_params(o, "CategoricalFocalCrossentropy")),
      options_(o) {
  KERASCPP_CHECK_VALUE(!o.apply_class_balancing,
                       "CategoricalFocalCrossentropy has no apply_class_balancing (BinaryFocalCrossentropy has); alpha "
                       "weights every class alike");
}

void CategoricalFocalCrossentropy::compute(Backend& backend, const Tensor& pred, const Tensor& target, Tensor& loss,
                                           Tensor& grad, float grad_scale) const {
  const double s = options_.label_smoothing;
  if (s == 0.0 || pred.rank() == 0) return backend.row_loss(kind_, params_, pred, target, loss, grad, grad_scale);
  const double classes = static_cast<double>(pred.dim(-1));
  backend.row_loss(kind_, params_, pred, detail::smoothed_targets(backend, target, s, s / classes), loss, grad,
                   grad_scale);
}

CategoricalGeneralizedCrossEntropy::CategoricalGeneralizedCrossEntropy(double q)
    : RowFormulaLoss(RowLoss::categorical_generalized_cross_entropy, RowLossParams{.q = static_cast<float>(q)}) {
  KERASCPP_CHECK_VALUE(
      q > 0 && q < 1,
      "CategoricalGeneralizedCrossEntropy: q must be in the interval (0, 1) (Keras' default 0.5), got {}", q);
}

namespace {

// 1 − c·I / (a·I + b·Σt + d·Σp + ε) with I = Σ t·p over the whole shard: Tversky (c = 1,
// a = 1 − α − β, b = α, d = β) and Dice (c = 2, a = 0, b = d = 1). Every example's loss is the
// shard's value L, so the engine's mean over the batch is L; the gradient of Σ_n L·grad_scale,
// N·grad_scale·dL/dp = N·grad_scale·(t·(−c·(D − a·I)/D²) + c·I·d/D²), is a·t + b in one pass.
void overlap_loss(Backend& backend, const Tensor& pred, const Tensor& target, double c, double a, double b, double d,
                  Tensor& loss, Tensor& grad, float grad_scale, const char* name) {
  KERASCPP_CHECK_SHAPE(target.dtype() == DType::float32 && target.numel() == pred.numel() && pred.rank() >= 1,
                       "{}: target {} ({}) must be float32 with pred's {} values (a mask per prediction)", name,
                       shape_str(target.shape()), dtype_name(target.dtype()), shape_str(pred.shape()));
  const Tensor t = target.reshape(pred.shape());
  Tensor product;
  backend.multiply(t, pred, product);
  const double inter = backend.sum(product), sum_t = backend.sum(t), sum_p = backend.sum(pred);
  const double den = a * inter + b * sum_t + d * sum_p + 1e-7;
  loss.fill(static_cast<float>(1.0 - c * inter / den));
  if (!grad.defined()) return;
  const double n = static_cast<double>(pred.dim(0)) * grad_scale;
  backend.copy(t, grad);
  backend.scale(grad, static_cast<float>(-n * c * (den - a * inter) / (den * den)));
  Tensor shift(grad.shape(), DType::float32, grad.device());
  shift.fill(static_cast<float>(n * c * inter * d / (den * den)));
  backend.add_inplace(grad, shift);
}

}  // namespace

Tversky::Tversky(double alpha, double beta) : alpha_(alpha), beta_(beta) {
  KERASCPP_CHECK_VALUE(std::isfinite(alpha) && std::isfinite(beta),
                       "Tversky: alpha and beta must be finite (Keras' defaults 0.5, 0.5), got {} and {}", alpha, beta);
}

void Tversky::compute(Backend& backend, const Tensor& pred, const Tensor& target, Tensor& loss, Tensor& grad,
                      float grad_scale) const {
  overlap_loss(backend, pred, target, 1.0, 1.0 - alpha_ - beta_, alpha_, beta_, loss, grad, grad_scale, "tversky");
}

void Dice::compute(Backend& backend, const Tensor& pred, const Tensor& target, Tensor& loss, Tensor& grad,
                   float grad_scale) const {
  overlap_loss(backend, pred, target, 2.0, 0.0, 1.0, 1.0, loss, grad, grad_scale, "dice");
}

}  // namespace kerascpp::losses
