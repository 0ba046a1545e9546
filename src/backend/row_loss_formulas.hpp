// The row formulas of TrainingKernels::row_loss (kerascpp/backend/row_loss.hpp), written once for the CPU
// and CUDA backends: both call row_loss_value on each row, so they agree formula for formula.
// Everything is computed in double from the float32 inputs (Keras computes in float32; the
// double keeps the sums order-independent enough for both backends to match the tests' float64
// references). Gradients follow the clips as Keras' autodiff does: zero where a value was
// clipped.
#pragma once
#include <cmath>
#include <cstdint>

#include "kerascpp/backend/row_loss.hpp"

#include "backend/host_device.hpp"

namespace kerascpp::row_losses {

// Keras' backend.epsilon().
inline constexpr double kEpsilon = 1e-7;

// Formulas whose row value is a mean (kl_divergence: a sum) of one term per value.
KERASCPP_HOST_DEVICE inline bool is_elementwise(RowLoss k) { return k <= RowLoss::equal; }
// Formulas whose target is integer class ids, one per row.
KERASCPP_HOST_DEVICE inline bool takes_labels(RowLoss k) { return k == RowLoss::categorical_generalized_cross_entropy; }
// Formulas that are metric values only (no gradient).
KERASCPP_HOST_DEVICE inline bool has_gradient(RowLoss k) {
  return k != RowLoss::equal && k != RowLoss::top_k_categorical_hit && k != RowLoss::pearson_correlation &&
         k != RowLoss::concordance_correlation;
}

KERASCPP_HOST_DEVICE inline double clamp(double v, double lo, double hi) { return v < lo ? lo : (v > hi ? hi : v); }
KERASCPP_HOST_DEVICE inline double sign(double v) { return v > 0 ? 1.0 : (v < 0 ? -1.0 : 0.0); }

// One value's term and its derivative by the prediction.
struct Term {
  double value, slope;
};

KERASCPP_HOST_DEVICE inline Term binary_focal_term(const RowLossParams& p, double x, double t) {
  const double prob = p.from_logits ? 1.0 / (1.0 + exp(-x)) : x;
  const double clipped = clamp(prob, kEpsilon, 1.0 - kEpsilon);
  const double bce = -(t * log(clipped) + (1.0 - t) * log(1.0 - clipped));
  const bool inside = prob > kEpsilon && prob < 1.0 - kEpsilon;
  const double dbce = inside ? -t / prob + (1.0 - t) / (1.0 - prob) : 0.0;
  const double miss = 1.0 - (t * prob + (1.0 - t) * (1.0 - prob));  // 1 − p_t
  const double gamma = p.gamma;
  const double focal = pow(miss, gamma);
  // d(1 − p_t)/dprob = 1 − 2t; (1 − p_t)^γ has slope 0 at γ = 0 (pow(0, −1) would be inf).
  const double dfocal = gamma == 0.0 ? 0.0 : gamma * pow(miss, gamma - 1.0) * (1.0 - 2.0 * t);
  const double weight = p.apply_class_balancing ? t * p.alpha + (1.0 - t) * (1.0 - p.alpha) : 1.0;
  const double dprob = p.from_logits ? prob * (1.0 - prob) : 1.0;
  return {weight * focal * bce, weight * (dfocal * bce + focal * dbce) * dprob};
}

KERASCPP_HOST_DEVICE inline Term element_term(RowLoss k, const RowLossParams& p, double x, double t) {
  const double eps = kEpsilon;
  switch (k) {
    case RowLoss::mean_absolute_error:
      return {fabs(x - t), sign(x - t)};
    case RowLoss::mean_absolute_percentage_error: {
      const double d = fabs(t) > eps ? fabs(t) : eps;
      return {100.0 * fabs(t - x) / d, 100.0 * sign(x - t) / d};
    }
    case RowLoss::mean_squared_logarithmic_error: {
      const double xc = x > eps ? x : eps;
      const double diff = log(xc + 1.0) - log((t > eps ? t : eps) + 1.0);
      return {diff * diff, x > eps ? 2.0 * diff / (x + 1.0) : 0.0};
    }
    case RowLoss::log_cosh: {
      // log(cosh(e)) = |e| + log1p(e^(−2|e|)) − log 2, finite for any e.
      const double e = x - t;
      return {fabs(e) + log1p(exp(-2.0 * fabs(e))) - log(2.0), tanh(e)};
    }
    case RowLoss::poisson:
      return {x - t * log(x + eps), 1.0 - t / (x + eps)};
    case RowLoss::hinge: {
      const double h = 1.0 - t * x;
      return {h > 0 ? h : 0.0, h > 0 ? -t : 0.0};
    }
    case RowLoss::squared_hinge: {
      const double h = 1.0 - t * x;
      return {h > 0 ? h * h : 0.0, h > 0 ? -2.0 * t * h : 0.0};
    }
    case RowLoss::kl_divergence: {
      const double tc = clamp(t, eps, 1.0), xc = clamp(x, eps, 1.0);
      return {tc * log(tc / xc), x >= eps && x <= 1.0 ? -tc / x : 0.0};
    }
    case RowLoss::binary_focal_crossentropy:
      return binary_focal_term(p, x, t);
    case RowLoss::equal:
      return {x == t ? 1.0 : 0.0, 0.0};
    default:
      return {0.0, 0.0};
  }
}

// First index of the row's largest value (numpy's argmax).
KERASCPP_HOST_DEVICE inline std::int64_t argmax(const float* v, std::int64_t n) {
  std::int64_t best = 0;
  for (std::int64_t j = 1; j < n; ++j)
    if (v[j] > v[best]) best = j;
  return best;
}

// −Σ normalize(t)·normalize(p) with Keras' ops.normalize factor min(1/√Σv², 1/ε).
KERASCPP_HOST_DEVICE inline double cosine_row(const float* x, const float* t, std::int64_t n, float* g, double gs) {
  double xx = 0, tt = 0, xt = 0;
  for (std::int64_t j = 0; j < n; ++j) {
    xx += static_cast<double>(x[j]) * x[j];
    tt += static_cast<double>(t[j]) * t[j];
    xt += static_cast<double>(x[j]) * t[j];
  }
  const double cap = 1.0 / kEpsilon;
  const double fx = xx > 0 && 1.0 / sqrt(xx) < cap ? 1.0 / sqrt(xx) : cap;
  const double ft = tt > 0 && 1.0 / sqrt(tt) < cap ? 1.0 / sqrt(tt) : cap;
  const bool clamped = !(fx < cap);  // a constant factor then: no slope through the norm
  if (g)
    for (std::int64_t j = 0; j < n; ++j) {
      const double d = clamped ? -ft * fx * t[j] : -ft * (fx * t[j] - fx * fx * fx * xt * x[j]);
      g[j] = static_cast<float>(d * gs);
    }
  return -fx * ft * xt;
}

KERASCPP_HOST_DEVICE inline double categorical_hinge_row(const float* x, const float* t, std::int64_t n, float* g,
                                                         double gs) {
  double pos = 0;
  std::int64_t neg_at = 0;
  double neg = 0;
  for (std::int64_t j = 0; j < n; ++j) {
    pos += static_cast<double>(t[j]) * x[j];
    const double v = (1.0 - t[j]) * static_cast<double>(x[j]);
    if (j == 0 || v > neg) {
      neg = v;
      neg_at = j;
    }
  }
  const double loss = neg - pos + 1.0;
  if (g)
    for (std::int64_t j = 0; j < n; ++j) {
      const double d = loss > 0 ? (j == neg_at ? 1.0 - t[j] : 0.0) - t[j] : 0.0;
      g[j] = static_cast<float>(d * gs);
    }
  return loss > 0 ? loss : 0.0;
}

// Σ −α·t·(1 − o)^γ·log(o) with o = p/Σp (p = softmax(x) with logits) clipped to [ε, 1 − ε].
KERASCPP_HOST_DEVICE inline double categorical_focal_row(const RowLossParams& p, const float* x, const float* t,
                                                         std::int64_t n, float* g, double gs) {
  double m = x[0], total = 0;
  for (std::int64_t j = 1; j < n; ++j) m = x[j] > m ? x[j] : m;
  for (std::int64_t j = 0; j < n; ++j) total += p.from_logits ? exp(x[j] - m) : static_cast<double>(x[j]);
  const double alpha = p.alpha, gamma = p.gamma, eps = kEpsilon;
  // dL/do_j, then through o = p/Σp (or the softmax): dL/dx_k = (G_k − Σ_j G_j·o_j)·(o_k or 1/Σp).
  double loss = 0, weighted = 0;
  for (std::int64_t j = 0; j < n; ++j) {
    const double o = (p.from_logits ? exp(x[j] - m) : static_cast<double>(x[j])) / total, oc = clamp(o, eps, 1.0 - eps);
    loss -= alpha * t[j] * pow(1.0 - oc, gamma) * log(oc);
    if (g) {
      const double dlog = gamma == 0.0 ? 0.0 : gamma * pow(1.0 - oc, gamma - 1.0) * log(oc);
      const double G = o > eps && o < 1.0 - eps ? alpha * t[j] * (dlog - pow(1.0 - oc, gamma) / oc) : 0.0;
      weighted += G * o;
    }
  }
  if (g)
    for (std::int64_t j = 0; j < n; ++j) {
      const double o = (p.from_logits ? exp(x[j] - m) : static_cast<double>(x[j])) / total,
                   oc = clamp(o, eps, 1.0 - eps);
      const double dlog = gamma == 0.0 ? 0.0 : gamma * pow(1.0 - oc, gamma - 1.0) * log(oc);
      const double G = o > eps && o < 1.0 - eps ? alpha * t[j] * (dlog - pow(1.0 - oc, gamma) / oc) : 0.0;
      const double d = p.from_logits ? o * (G - weighted) : (G - weighted) / total;
      g[j] = static_cast<float>(d * gs);
    }
  return loss;
}

// Means and (population) variances of a row pair, for the correlations.
struct RowMoments {
  double mean_t, mean_x, var_t, var_x;
};
KERASCPP_HOST_DEVICE inline RowMoments row_moments(const float* x, const float* t, std::int64_t n) {
  RowMoments r{0, 0, 0, 0};
  for (std::int64_t j = 0; j < n; ++j) {
    r.mean_t += t[j];
    r.mean_x += x[j];
  }
  r.mean_t /= static_cast<double>(n);
  r.mean_x /= static_cast<double>(n);
  for (std::int64_t j = 0; j < n; ++j) {
    r.var_t += (t[j] - r.mean_t) * (t[j] - r.mean_t);
    r.var_x += (x[j] - r.mean_x) * (x[j] - r.mean_x);
  }
  r.var_t /= static_cast<double>(n);
  r.var_x /= static_cast<double>(n);
  return r;
}

KERASCPP_HOST_DEVICE inline double correlation_row(RowLoss k, const float* x, const float* t, std::int64_t n) {
  const RowMoments m = row_moments(x, t, n);
  double s = 0;
  if (k == RowLoss::pearson_correlation) {
    const double norm = sqrt(m.var_t) * sqrt(m.var_x);
    for (std::int64_t j = 0; j < n; ++j) s += (t[j] - m.mean_t) * (x[j] - m.mean_x) / norm;
    return s / static_cast<double>(n);
  }
  // Keras centres the target by the *prediction's* mean in the covariance term; kept as Keras has it.
  const double norm = m.var_t + m.var_x + (m.mean_t - m.mean_x) * (m.mean_t - m.mean_x) + kEpsilon;
  for (std::int64_t j = 0; j < n; ++j) s += 2.0 * (t[j] - m.mean_x) * (x[j] - m.mean_x) / norm;
  return s / static_cast<double>(n);
}

// The value of one row of n values: x the predictions, t the target row (null for labelled
// formulas, which read `label`, already checked to be in [0, n)). When g is not null it gets
// d(value)/dx · gs.
KERASCPP_HOST_DEVICE inline double row_loss_value(RowLoss k, const RowLossParams& p, const float* x, const float* t,
                                                  std::int64_t label, std::int64_t n, float* g, double gs) {
  if (is_elementwise(k)) {
    const double divisor = k == RowLoss::kl_divergence ? 1.0 : static_cast<double>(n);
    double total = 0;
    for (std::int64_t j = 0; j < n; ++j) {
      const Term term = element_term(k, p, x[j], t[j]);
      total += term.value;
      if (g) g[j] = static_cast<float>(term.slope / divisor * gs);
    }
    return total / divisor;
  }
  switch (k) {
    case RowLoss::cosine_similarity:
      return cosine_row(x, t, n, g, gs);
    case RowLoss::categorical_hinge:
      return categorical_hinge_row(x, t, n, g, gs);
    case RowLoss::categorical_focal_crossentropy:
      return categorical_focal_row(p, x, t, n, g, gs);
    case RowLoss::categorical_generalized_cross_entropy: {
      const double q = p.q, py = x[label];
      if (g) {  // zeros, then the label's slope: a select inside the loop crashes nvcc 13.0's cicc
        for (std::int64_t j = 0; j < n; ++j) g[j] = 0.f;
        g[label] = static_cast<float>(-pow(py, q - 1.0) * gs);
      }
      return (1.0 - pow(py, q)) / q;
    }
    case RowLoss::top_k_categorical_hit: {
      const float score = x[argmax(t, n)];
      std::int64_t larger = 0;
      for (std::int64_t j = 0; j < n; ++j) larger += x[j] > score ? 1 : 0;
      return score == score && larger < p.k ? 1.0 : 0.0;  // a NaN score is never a hit
    }
    default:
      return correlation_row(k, x, t, n);
  }
}

}  // namespace kerascpp::row_losses
