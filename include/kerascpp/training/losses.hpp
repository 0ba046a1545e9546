// Losses with Keras names and defaults. A loss turns (predictions, targets) into per-example
// losses and the gradient w.r.t. the predictions; the engine scales by the global batch size.
//
// Writing a loss: subclass Loss and implement compute() with Backend ops (or host loops on CPU
// tensors), then pass an object to compile(): `.loss = MyLoss()`. The engine calls compute()
// once per replica and batch, from that replica's thread, with:
//   pred    the model's output for the replica's shard, [N, ...], on the replica's device;
//   target  the shard's targets, moved to the same device (shape and dtype as the dataset has them);
//   loss    a float32 tensor of shape [N] that the engine has already allocated: write one loss
//           value per example (the engine logs sum(loss) / examples over the epoch);
//   grad    either a float32 tensor with pred's shape, already allocated by the engine (training:
//           write d(loss_n)/d(pred) * grad_scale into it, every element), or an undefined tensor
//           (evaluate()/predict paths: compute the loss only and leave grad alone);
//   grad_scale  1 / (global batch size), the same on every replica: the gradient of the batch's
//           mean loss is then the sum of the replicas' gradients. Multiply it in, never divide by N.
// compute() is const and may run on several replicas at once: keep no mutable state in a Loss.
// Sample weights (fit/evaluate's (x, y, sample_weight), class_weight) need nothing from a Loss: the
// engine scales each example's loss and gradient row by its weight after compute() returns.
#pragma once
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#include "kerascpp/backend/backend.hpp"
#include "kerascpp/backend/row_loss.hpp"

/// Keras' losses (keras.losses), and the Loss interface for your own.
namespace kerascpp::losses {

/// A loss: per-example losses and their gradient w.r.t. the predictions (contract above).
class Loss {
 public:
  /// Destroys the loss.
  virtual ~Loss() = default;
  virtual std::string name() const = 0;  ///< Keras function name, e.g. "sparse_categorical_crossentropy"
  /// Keras' serialization of this loss ({"module": "keras.losses", "class_name": ..., "config": ...})
  /// for Model::save's compile_config; "" for a loss Keras does not have (no compile_config is then
  /// written).
  virtual std::string config_json() const { return ""; }
  /// Writes loss[n] for every example and, when grad is defined, grad = d(loss_n)/d(pred) * grad_scale
  /// (see the contract at the top of this file).
  virtual void compute(Backend& backend, const Tensor& pred, const Tensor& target, Tensor& loss, Tensor& grad,
                       float grad_scale) const = 0;
  /// Which accuracy "accuracy" means with this loss (Keras picks by loss and target shape).
  enum class AccuracyKind { sparse_categorical, categorical, binary };
  /// The kind of "accuracy" metric that goes with this loss (categorical by default).
  virtual AccuracyKind accuracy_kind() const { return AccuracyKind::categorical; }
};

/// The crossentropies' settings, with Keras' names and defaults.
struct CrossentropyOptions {
  /// The predictions are logits (softmax/sigmoid applied inside the loss), not probabilities.
  bool from_logits = false;
  /// Keras' label_smoothing (Categorical and Binary crossentropy only), in [0, 1]: targets become
  /// t·(1 − s) + s/classes (categorical) or t·(1 − s) + s/2 (binary) before the loss.
  double label_smoothing = 0.0;
};

/// Keras' SparseCategoricalCrossentropy: integer class targets against class scores.
class SparseCategoricalCrossentropy : public Loss {
 public:
  /// A loss with these settings; label_smoothing must be 0 (it needs one-hot targets).
  explicit SparseCategoricalCrossentropy(CrossentropyOptions options = {});
  std::string name() const override { return "sparse_categorical_crossentropy"; }
  std::string config_json() const override;
  void compute(Backend& backend, const Tensor& pred, const Tensor& target, Tensor& loss, Tensor& grad,
               float grad_scale) const override {
    backend.sparse_categorical_crossentropy(pred, target, options_.from_logits, loss, grad, grad_scale);
  }
  AccuracyKind accuracy_kind() const override { return AccuracyKind::sparse_categorical; }

 private:
  CrossentropyOptions options_;
};

/// Keras' CategoricalCrossentropy: one-hot (or probability) targets against class scores.
class CategoricalCrossentropy : public Loss {
 public:
  /// A loss with these settings.
  explicit CategoricalCrossentropy(CrossentropyOptions options = {});
  std::string name() const override { return "categorical_crossentropy"; }
  std::string config_json() const override;
  void compute(Backend& backend, const Tensor& pred, const Tensor& target, Tensor& loss, Tensor& grad,
               float grad_scale) const override;

 private:
  CrossentropyOptions options_;
};

/// Keras' BinaryCrossentropy: 0/1 targets against probabilities (or logits).
class BinaryCrossentropy : public Loss {
 public:
  /// A loss with these settings.
  explicit BinaryCrossentropy(CrossentropyOptions options = {});
  std::string name() const override { return "binary_crossentropy"; }
  std::string config_json() const override;
  void compute(Backend& backend, const Tensor& pred, const Tensor& target, Tensor& loss, Tensor& grad,
               float grad_scale) const override;
  AccuracyKind accuracy_kind() const override { return AccuracyKind::binary; }

 private:
  CrossentropyOptions options_;
};

/// Keras' MeanSquaredError: the mean of (pred - target)² over each example's values.
class MeanSquaredError : public Loss {
 public:
  std::string name() const override { return "mean_squared_error"; }
  std::string config_json() const override;
  void compute(Backend& backend, const Tensor& pred, const Tensor& target, Tensor& loss, Tensor& grad,
               float grad_scale) const override {
    backend.mean_squared_error(pred, target, loss, grad, grad_scale);
  }
};

/// Keras' Huber (delta = 1): quadratic within delta of the target, linear beyond; robust to outliers.
class Huber : public Loss {
 public:
  /// The quadratic-to-linear switch at |pred - target| = `delta`.
  explicit Huber(double delta = 1.0);
  std::string name() const override { return "huber"; }
  std::string config_json() const override;
  void compute(Backend& backend, const Tensor& pred, const Tensor& target, Tensor& loss, Tensor& grad,
               float grad_scale) const override {
    backend.huber(pred, target, static_cast<float>(delta_), loss, grad, grad_scale);
  }

 private:
  double delta_;
};

// ---- the losses of one TrainingKernels::row_loss formula (kerascpp/backend/row_loss.hpp) ----
// Each is Keras' class of the same name with reduction "sum_over_batch_size" (the engine's mean
// over the global batch); its string name in compile() is name() (and Keras' aliases, see LossRef).

/// Base of the losses that are one Backend::row_loss formula with fixed parameters.
class RowFormulaLoss : public Loss {
 public:
  /// Calls backend.row_loss with this loss's formula and parameters.
  void compute(Backend& backend, const Tensor& pred, const Tensor& target, Tensor& loss, Tensor& grad,
               float grad_scale) const override {
    backend.row_loss(kind_, params_, pred, target, loss, grad, grad_scale);
  }

 protected:
  /// A loss computing formula `kind` with `params`.
  explicit RowFormulaLoss(RowLoss kind, RowLossParams params = {}) : kind_(kind), params_(params) {}
  /// The formula.
  RowLoss kind_;
  /// The formula's parameters.
  RowLossParams params_;
};

/// Keras' MeanAbsoluteError: mean of |pred − target| ("mean_absolute_error", "mae").
class MeanAbsoluteError : public RowFormulaLoss {
 public:
  MeanAbsoluteError() : RowFormulaLoss(RowLoss::mean_absolute_error) {}
  std::string name() const override { return "mean_absolute_error"; }
  std::string config_json() const override;
};

/// Keras' MeanAbsolutePercentageError: 100·mean |t − p| / max(|t|, 1e-7) ("mape").
class MeanAbsolutePercentageError : public RowFormulaLoss {
 public:
  MeanAbsolutePercentageError() : RowFormulaLoss(RowLoss::mean_absolute_percentage_error) {}
  std::string name() const override { return "mean_absolute_percentage_error"; }
  std::string config_json() const override;
};

/// Keras' MeanSquaredLogarithmicError: mean (log(p + 1) − log(t + 1))², values below 1e-7 raised to it ("msle").
class MeanSquaredLogarithmicError : public RowFormulaLoss {
 public:
  MeanSquaredLogarithmicError() : RowFormulaLoss(RowLoss::mean_squared_logarithmic_error) {}
  std::string name() const override { return "mean_squared_logarithmic_error"; }
  std::string config_json() const override;
};

/// Keras' CosineSimilarity over the last axis (axis=-1, the only axis supported): −cos(pred, target).
class CosineSimilarity : public RowFormulaLoss {
 public:
  /// axis must be -1 (Keras' default); other axes -> ValueError.
  explicit CosineSimilarity(int axis = -1);
  std::string name() const override { return "cosine_similarity"; }
  std::string config_json() const override;
};

/// Keras' LogCosh: mean log(cosh(pred − target)) ("log_cosh", "logcosh").
class LogCosh : public RowFormulaLoss {
 public:
  LogCosh() : RowFormulaLoss(RowLoss::log_cosh) {}
  std::string name() const override { return "log_cosh"; }
  std::string config_json() const override;
};

/// Keras' Poisson: mean pred − target·log(pred + 1e-7).
class Poisson : public RowFormulaLoss {
 public:
  Poisson() : RowFormulaLoss(RowLoss::poisson) {}
  std::string name() const override { return "poisson"; }
  std::string config_json() const override;
};

/// Keras' KLDivergence: Σ over the last axis of t·log(t/p), both clipped to [1e-7, 1] ("kld").
class KLDivergence : public RowFormulaLoss {
 public:
  KLDivergence() : RowFormulaLoss(RowLoss::kl_divergence) {}
  std::string name() const override { return "kl_divergence"; }
  std::string config_json() const override;
};

/// Keras' Hinge: mean max(1 − t·p, 0); targets that are all 0 or 1 (per batch, as Keras checks) become −1/1.
class Hinge : public RowFormulaLoss {
 public:
  Hinge() : RowFormulaLoss(RowLoss::hinge) {}
  std::string name() const override { return "hinge"; }
  std::string config_json() const override;
  void compute(Backend& backend, const Tensor& pred, const Tensor& target, Tensor& loss, Tensor& grad,
               float grad_scale) const override;
};

/// Keras' SquaredHinge: mean max(1 − t·p, 0)², with Hinge's conversion of 0/1 targets.
class SquaredHinge : public Hinge {
 public:
  SquaredHinge() { kind_ = RowLoss::squared_hinge; }
  std::string name() const override { return "squared_hinge"; }
  std::string config_json() const override;
};

/// Keras' CategoricalHinge: max(max((1 − t)·p) − Σ t·p + 1, 0) over one-hot (or ±1) targets.
class CategoricalHinge : public RowFormulaLoss {
 public:
  CategoricalHinge() : RowFormulaLoss(RowLoss::categorical_hinge) {}
  std::string name() const override { return "categorical_hinge"; }
  std::string config_json() const override;
};

/// Options of the focal crossentropies (Keras' arguments and defaults).
struct FocalOptions {
  bool apply_class_balancing = false;  ///< BinaryFocalCrossentropy only
  /// The weight of the positive class (of every class, categorical).
  double alpha = 0.25;
  /// The focusing exponent on (1 − p_t).
  double gamma = 2.0;
  /// pred holds logits (sigmoid / softmax applied first).
  bool from_logits = false;
  double label_smoothing = 0.0;  ///< in [0, 1], as the crossentropies'
};

/// Keras' BinaryFocalCrossentropy: mean (1 − p_t)^γ·bce (α-weighted with apply_class_balancing).
class BinaryFocalCrossentropy : public RowFormulaLoss {
 public:
  /// With Keras' defaults; `options.apply_class_balancing` turns on the α weighting.
  explicit BinaryFocalCrossentropy(FocalOptions options = {});
  std::string name() const override { return "binary_focal_crossentropy"; }
  std::string config_json() const override;
  void compute(Backend& backend, const Tensor& pred, const Tensor& target, Tensor& loss, Tensor& grad,
               float grad_scale) const override;
  AccuracyKind accuracy_kind() const override { return AccuracyKind::binary; }

 private:
  FocalOptions options_;
};

/// Keras' CategoricalFocalCrossentropy over one-hot targets: Σ −α·t·(1 − p)^γ·log(p).
class CategoricalFocalCrossentropy : public RowFormulaLoss {
 public:
  /// With Keras' defaults (`apply_class_balancing` does not apply).
  explicit CategoricalFocalCrossentropy(FocalOptions options = {});
  std::string name() const override { return "categorical_focal_crossentropy"; }
  std::string config_json() const override;
  void compute(Backend& backend, const Tensor& pred, const Tensor& target, Tensor& loss, Tensor& grad,
               float grad_scale) const override;

 private:
  FocalOptions options_;
};

/// Keras' CategoricalGeneralizedCrossEntropy over integer labels: (1 − p[label]^q)/q, q in (0, 1).
class CategoricalGeneralizedCrossEntropy : public RowFormulaLoss {
 public:
  /// `q` in (0, 1): towards 0 it nears the crossentropy, towards 1 the mean absolute error.
  explicit CategoricalGeneralizedCrossEntropy(double q = 0.5);
  std::string name() const override { return "categorical_generalized_cross_entropy"; }
  std::string config_json() const override;
  AccuracyKind accuracy_kind() const override { return AccuracyKind::sparse_categorical; }
};

/// Keras' Tversky with axis=None: 1 − TP/(TP + α·FP + β·FN + 1e-7) over all of a replica's shard
/// (each example's loss is the shard's, as Keras computes one value per batch on each replica).
class Tversky : public Loss {
 public:
  /// `alpha` weighs false positives, `beta` false negatives.
  explicit Tversky(double alpha = 0.5, double beta = 0.5);
  std::string name() const override { return "tversky"; }
  std::string config_json() const override;
  void compute(Backend& backend, const Tensor& pred, const Tensor& target, Tensor& loss, Tensor& grad,
               float grad_scale) const override;
  AccuracyKind accuracy_kind() const override { return AccuracyKind::binary; }

 private:
  double alpha_, beta_;
};

/// Keras' Dice with axis=None: 1 − 2·Σt·p / (Σt + Σp + 1e-7) over all of a replica's shard (as Tversky).
class Dice : public Loss {
 public:
  std::string name() const override { return "dice"; }
  std::string config_json() const override;
  void compute(Backend& backend, const Tensor& pred, const Tensor& target, Tensor& loss, Tensor& grad,
               float grad_scale) const override;
  AccuracyKind accuracy_kind() const override { return AccuracyKind::binary; }
};

/// Keras' Circle loss (Sun et al. 2020) over a replica's batch: y_pred [N, E] embeddings (L2-normalized
/// by the model, as Keras expects), y_true [N] integer class ids; examples with no positive pair are
/// left out of the mean, as Keras masks them.
class Circle : public Loss {
 public:
  /// `gamma` scales the similarities, `margin` separates positives from negatives.
  explicit Circle(double gamma = 80.0, double margin = 0.4, bool remove_diagonal = true);
  std::string name() const override { return "circle"; }
  std::string config_json() const override;
  void compute(Backend& backend, const Tensor& pred, const Tensor& target, Tensor& loss, Tensor& grad,
               float grad_scale) const override;

 private:
  double gamma_, margin_;
  bool remove_diagonal_;
};

/// Keras' CTC loss: y_pred [N, T, classes] logits, y_true [N, max_label_length] class ids padded with
/// 0, which is also the blank; each example's −log p(labels | logits) over all of its T steps.
class CTC : public Loss {
 public:
  std::string name() const override { return "ctc"; }
  std::string config_json() const override;
  void compute(Backend& backend, const Tensor& pred, const Tensor& target, Tensor& loss, Tensor& grad,
               float grad_scale) const override;
};

/// Shared handle accepted by compile(): a Loss object or a Keras name ("mse", "sparse_categorical_crossentropy");
/// every name and alias is listed in docs/training_and_evaluation.md.
class LossRef {
 public:
  /// No loss.
  LossRef() = default;
  /// @{
  /// The loss with this Keras name or alias ("mse", "sparse_categorical_crossentropy", ...); ValueError otherwise.
  LossRef(const char* name);         // NOLINT: implicit by design, like Keras strings
  LossRef(const std::string& name);  // NOLINT
  /// @}
  template <class L, class = std::enable_if_t<std::is_base_of_v<Loss, L>>>
  /// Holds a copy of `loss`.
  LossRef(L loss) : loss_(std::make_shared<L>(std::move(loss))) {}  // NOLINT
  /// Shares `loss`.
  LossRef(std::shared_ptr<Loss> loss) : loss_(std::move(loss)) {}  // NOLINT
  template <class L, class = std::enable_if_t<std::is_base_of_v<Loss, L>>>
  LossRef(std::shared_ptr<L> loss) : loss_(std::move(loss)) {}  ///< NOLINT: a shared_ptr to a subclass
  /// The loss held (nullptr for none).
  Loss* get() const { return loss_.get(); }
  /// The loss's members.
  Loss* operator->() const { return loss_.get(); }
  /// Whether a loss is held.
  explicit operator bool() const { return static_cast<bool>(loss_); }

 private:
  std::shared_ptr<Loss> loss_;
};

}  // namespace kerascpp::losses
