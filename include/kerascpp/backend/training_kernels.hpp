// TrainingKernels: the fused kernels of training that are not tensor or NN primitives: losses
// with their gradients, the sums behind metrics, optimizer updates, and weight penalties and
// constraints. Every Backend provides them (Backend derives from this interface); code that only
// needs them can take a TrainingKernels&. Kept apart from the primitives (kerascpp/backend/backend.hpp)
// so that a new backend, or a new op, is reviewed against a short list.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "kerascpp/backend/optimizer_update.hpp"
#include "kerascpp/backend/row_loss.hpp"
#include "kerascpp/tensor/tensor.hpp"

namespace kerascpp {

/// The fused training kernels of one device (losses, metric sums, optimizer updates, penalties); every Backend is one.
class TrainingKernels {
 public:
  /// Releases the kernels' resources.
  virtual ~TrainingKernels() = default;

  // ---- losses: per-example loss out[N]; grad = d(loss_n)/d(pred) * grad_scale ----
  /// Sparse categorical crossentropy; an undefined `grad` computes the loss only (evaluation).
  /// labels: integer class ids [N] or [N,1] (int32/int64/uint8), checked against the class count.
  virtual void sparse_categorical_crossentropy(const Tensor& pred, const Tensor& labels, bool from_logits, Tensor& loss,
                                               Tensor& grad, float grad_scale) = 0;
  /// Categorical crossentropy against one-hot (or probability) targets [N, C].
  virtual void categorical_crossentropy(const Tensor& pred, const Tensor& target, bool from_logits, Tensor& loss,
                                        Tensor& grad, float grad_scale) = 0;
  /// Binary crossentropy, averaged over each example's values.
  virtual void binary_crossentropy(const Tensor& pred, const Tensor& target, bool from_logits, Tensor& loss,
                                   Tensor& grad, float grad_scale) = 0;
  /// Mean of (pred − target)² over each example's values.
  virtual void mean_squared_error(const Tensor& pred, const Tensor& target, Tensor& loss, Tensor& grad,
                                  float grad_scale) = 0;
  /// Keras' Huber: mean over an example's values of 0.5·q² + delta·(|e| − q), e = pred − target,
  /// q = min(|e|, delta); grad = clip(e, −delta, delta) / values · grad_scale. delta > 0.
  virtual void huber(const Tensor& pred, const Tensor& target, float delta, Tensor& loss, Tensor& grad,
                     float grad_scale) = 0;
  /// The rest of Keras' losses, one formula per RowLoss (kerascpp/backend/row_loss.hpp): loss[n] = mean
  /// over example n's rows of the last axis of the formula's row value. pred of rank >= 2 (rank 1:
  /// one value per example) for the elementwise formulas, of rank >= 2 for the whole-row ones;
  /// target of pred's shape (one-hot / dense), except categorical_generalized_cross_entropy's
  /// integer class ids (one per row, checked against the class count). The formulas marked "no
  /// gradient" are metric values: a defined grad is refused with a ValueError.
  virtual void row_loss(RowLoss kind, const RowLossParams& params, const Tensor& pred, const Tensor& target,
                        Tensor& loss, Tensor& grad, float grad_scale) = 0;

  // ---- metric helpers: return sums over the batch (the caller divides) ----
  /// Examples whose arg-max prediction equals the integer label.
  virtual double sparse_categorical_accuracy_sum(const Tensor& pred, const Tensor& labels) = 0;
  /// Examples whose label's score is among the k largest of its row (fewer than k scores are
  /// strictly larger: ties at the boundary count as in, like TensorFlow's in_top_k).
  virtual double sparse_top_k_accuracy_sum(const Tensor& pred, const Tensor& labels, int k) = 0;
  /// Examples whose arg-max prediction equals the target's arg-max.
  virtual double categorical_accuracy_sum(const Tensor& pred, const Tensor& target) = 0;
  /// Elements where (pred > threshold) equals the 0/1 target, over all elements.
  virtual double binary_accuracy_sum(const Tensor& pred, const Tensor& target, float threshold) = 0;
  virtual double absolute_error_sum(const Tensor& pred, const Tensor& target) = 0;  ///< Σ|p−t| over all elements
  /// Σ x over all elements.
  virtual double sum(const Tensor& x) = 0;

  // ---- confusion matrices (Precision, Recall, AUC): counts over elements, not examples ----
  /// Both return (TP[T], FP[T], TN[T], FN[T]) as 4·T doubles (exact integer counts), in the order
  /// of the thresholds. An element is a positive when its target != 0 (float32 target with
  /// pred's numel, Keras' cast to bool) and is predicted positive at threshold t when pred > t.
  /// The elements are pred[offset + k·stride] for k < numel/stride: stride 1, offset 0 for all
  /// of them; stride C, offset c for column c of [..., C] (Keras' class_id). NaN: predicted negative.
  /// Counts at the given thresholds (see above).
  virtual std::vector<double> confusion_counts(const Tensor& pred, const Tensor& target,
                                               const std::vector<float>& thresholds, std::int64_t stride,
                                               std::int64_t offset) = 0;
  /// Keras' evenly spaced thresholds (AUC's num_thresholds T >= 2: −ε, 1/(T−1), …, (T−2)/(T−1), 1+ε)
  /// counted as Keras' optimized update does, in float32: pred clipped to [0, 1] falls in bucket
  /// max(ceil(pred·(T−1)) − 1, 0) and counts as positive at thresholds 0..bucket (NaN: bucket 0).
  virtual std::vector<double> even_confusion_counts(const Tensor& pred, const Tensor& target, int num_thresholds) = 0;

  // ---- optimizer updates (Keras 3 formulas), in place on w and slots ----
  /// velocity = momentum·velocity − lr·g; w += velocity (nesterov: w += momentum·velocity − lr·g).
  /// momentum == 0: w −= lr·g, velocity unused.
  virtual void sgd_update(Tensor& w, const Tensor& g, Tensor& velocity, float lr, float momentum, bool nesterov) = 0;
  /// m = β1 m + (1−β1) g; v = β2 v + (1−β2) g²; w −= lr_t · m / (sqrt(v) + eps)
  virtual void adam_update(Tensor& w, const Tensor& g, Tensor& m, Tensor& v, float lr_t, float beta_1, float beta_2,
                           float eps) = 0;
  /// v = ρ v + (1−ρ) g²; w −= lr · g / sqrt(v + eps)   (no momentum, not centered)
  virtual void rmsprop_update(Tensor& w, const Tensor& g, Tensor& v, float lr, float rho, float eps) = 0;
  /// Decoupled weight decay (AdamW, Keras' _apply_weight_decay): w −= w · weight_decay · lr.
  virtual void weight_decay_update(Tensor& w, float lr, float weight_decay) = 0;
  /// accumulator += g²; w −= lr · g / sqrt(accumulator + eps)   (Adagrad)
  virtual void adagrad_update(Tensor& w, const Tensor& g, Tensor& accumulator, float lr, float eps) = 0;
  /// Keras 3 Nadam, in Keras' float32 operation order: m += (g − m)(1 − β1); v += (g² − v)(1 − β2);
  /// m̂ = (u_next·m)/(1 − u_product·u_next) + ((1 − u)·g)/(1 − u_product); v̂ = v/(1 − beta_2_power);
  /// w −= (m̂·lr)/(√v̂ + eps). The caller passes the step's momentum schedule u = β1(1 − 0.5·0.96^t),
  /// u_next (the same at t+1), u_product = Π u up to this step and beta_2_power = β2^t.
  virtual void nadam_update(Tensor& w, const Tensor& g, Tensor& m, Tensor& v, float lr, float beta_1, float beta_2,
                            float eps, float u, float u_next, float u_product, float beta_2_power) = 0;
  /// Runs one elementwise rule of Keras' optimizers (Adamax, Adadelta, Ftrl, Lion, Lamb's direction,
  /// clipvalue, gradient accumulation, EMA; see UpdateRule) in place on w and `slots` (float32, w's
  /// shape, as many as the rule names). For the gradient rules `w` is the gradient; `g` is unused.
  virtual void optimizer_update(const UpdateParams& params, Tensor& w, const Tensor& g,
                                const std::vector<Tensor*>& slots) = 0;
  /// Σ x² in double (gradient clipping by norm); deterministic for a given x.
  virtual double sum_squares(const Tensor& x) = 0;
  /// Whether no element of any of xs (float32, any shapes) is Inf or NaN: LossScaleOptimizer's
  /// overflow check of the gradients. One answer for all of xs, so a GPU waits for it once.
  virtual bool all_finite(const std::vector<Tensor>& xs) = 0;

  // ---- weight regularizers and constraints (keras.regularizers / keras.constraints) ----
  /// The L1L2 penalty l1·Σ|w| + l2·Σw² of w (summed in double, deterministic for a given w); with
  /// a defined `grad` (w's shape) it also adds the penalty's gradient times grad_scale,
  /// grad_scale·(l1·sign(w) + 2·l2·w), into it (grad_scale: the loss scale of a
  /// LossScaleOptimizer, which scales the whole loss, penalties included; 1 otherwise).
  virtual double weight_penalty(const Tensor& w, float l1, float l2, Tensor& grad, float grad_scale) = 0;
  // Σ weight_penalty over `terms` in order (the same doubles), every gradient added at once; the
  // total comes from the returned function. This default computes it here; a GPU backend queues
  // the sums, and its function waits for them alone, so a caller can queue more work (the
  // optimizer's update) before asking: one wait per step instead of one per weight. The
  // function is valid until this backend's next weight_penalties or weight_penalty call.
  /// One variable's penalty for weight_penalties.
  struct PenaltyTerm {
    const Tensor* w;  ///< the weights
    /// @{
    /// The L1 and L2 factors.
    float l1, l2;
    /// @}
    Tensor* grad;  ///< null or undefined: no gradient
  };
  /// Σ weight_penalty over `terms` (see above): the total from the returned function.
  virtual std::function<double()> weight_penalties(const std::vector<PenaltyTerm>& terms, float grad_scale);
  /// MaxNorm in place on w viewed as [rows, numel/rows]: column c, of L2 norm n_c, is scaled by
  /// clip(n_c, 0, max_value) / (1e-7 + n_c) (Keras' formula, so even short columns shrink a hair).
  virtual void max_norm(Tensor& w, std::int64_t rows, float max_value) = 0;
};

}  // namespace kerascpp
