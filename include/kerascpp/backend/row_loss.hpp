// The formulas of TrainingKernels::row_loss: Keras losses (and loss-shaped metric values) that
// are a function of one row of pred's last axis and the matching target row, averaged per
// example over its rows, so a caller's Σ/N over examples is Keras' sum_over_batch_size mean.
// Plain types only: the CUDA kernels include this header too.
#pragma once
#include <cstdint>

namespace kerascpp {

/// A row formula of TrainingKernels::row_loss (Keras' function of the same name).
enum class RowLoss : std::uint8_t {
  // Elementwise: the row's value is the mean over its values of a term of (pred, target).
  mean_absolute_error,             // |p − t|
  mean_absolute_percentage_error,  // 100·|t − p| / max(|t|, ε)
  mean_squared_logarithmic_error,  // (log(max(p, ε) + 1) − log(max(t, ε) + 1))²
  log_cosh,                        // log(cosh(p − t))
  poisson,                         // p − t·log(p + ε)
  hinge,                           // max(1 − t·p, 0) (targets already in {−1, 1})
  squared_hinge,                   // max(1 − t·p, 0)²
  kl_divergence,                   // Σ (not mean) of t'·log(t'/p'), t', p' clipped to [ε, 1]
  binary_focal_crossentropy,       // (1 − p_t)^γ·bce, optionally α-balanced (params)
  equal,                           // 1 where p == t, else 0 (Keras' Accuracy; no gradient)
  // Whole rows (the last axis is the class or feature axis).
  cosine_similarity,                      // −Σ normalize(t)·normalize(p)
  categorical_hinge,                      // max(max((1 − t)·p) − Σ t·p + 1, 0)
  categorical_focal_crossentropy,         // Σ −α·t·(1 − o)^γ·log(o), o = p/Σp clipped (params)
  categorical_generalized_cross_entropy,  // (1 − p[label]^q)/q; target: integer class ids, one per row
  top_k_categorical_hit,                  // 1 when argmax(t)'s score is among the k largest (no gradient)
  pearson_correlation,                    // mean of standardized t·p over the row (no gradient)
  concordance_correlation,                // Keras' concordance_correlation over the row (no gradient)
};

/// The parameters some row formulas take (Keras' argument names and defaults).
struct RowLossParams {
  float alpha = 0.25f;                 ///< focal losses' weighting factor
  float gamma = 2.f;                   ///< focal losses' focusing exponent
  float q = 0.5f;                      ///< categorical_generalized_cross_entropy's exponent, in (0, 1)
  int k = 5;                           ///< top_k_categorical_hit's k
  bool from_logits = false;            ///< focal losses: pred holds logits (sigmoid / softmax first)
  bool apply_class_balancing = false;  ///< binary focal: weight by α (positives) and 1 − α (negatives)
};

}  // namespace kerascpp
