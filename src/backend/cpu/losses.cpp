// Losses with Keras 3 semantics (keras/src/backend/numpy/nn.py): per-example loss and its
// gradient, fused in one pass. Without logits, probabilities are normalised (categorical) and
// clipped to [eps, 1-eps]; clipped entries get zero gradient, as the clip does in Keras.
// With logits the log-softmax / log-sigmoid forms are used, which stay finite for any input.
#include <algorithm>
#include <cmath>

#include "backend/cpu/cpu_backend.hpp"
#include "backend/cpu/loss_common.hpp"
#include "backend/cpu/parallel.hpp"
#include "backend/row_loss_formulas.hpp"

namespace kerascpp::cpu {

namespace {

// Prepares loss [N] and, when defined, grad (pred's shape). Returns the grad pointer or null.
float* prepare_loss_outputs(const Tensor& pred, Tensor& loss, Tensor& grad, std::int64_t examples, const char* op) {
  prepare_output(loss, {examples}, op, "loss");
  if (!grad.defined()) return nullptr;
  prepare_output(grad, pred.shape(), op, "grad");
  return grad.data<float>();
}

// Rows per parallel block so that one block covers about kElementGrain values.
std::int64_t example_grain(const RowLayout& l) {
  return std::max<std::int64_t>(1, kElementGrain / std::max<std::int64_t>(l.per_example * l.width, 1));
}

bool inside_clip(float q) { return q > kProbEpsilon && q < 1.f - kProbEpsilon; }
float clip_prob(float q) { return std::min(std::max(q, kProbEpsilon), 1.f - kProbEpsilon); }

// Cross-entropy of one row against a target row (t == nullptr: one-hot at `label`).
// Writes the gradient row scaled by `gs` when g is non-null; returns the loss.
double crossentropy_row(const float* z, const float* t, std::int64_t label, std::int64_t C, bool from_logits, float* g,
                        float gs) {
  double loss = 0.0;
  if (from_logits) {
    float m = z[0];
    for (std::int64_t j = 1; j < C; ++j) m = std::max(m, z[j]);
    double s = 0.0;
    for (std::int64_t j = 0; j < C; ++j) s += std::exp(static_cast<double>(z[j]) - m);
    double lse = m + std::log(s);
    double tsum = 1.0;
    if (t) {
      tsum = 0.0;
      for (std::int64_t j = 0; j < C; ++j) {
        tsum += t[j];
        loss += t[j] * (lse - z[j]);
      }
    } else {
      loss = lse - z[label];
    }
    if (g) {
      for (std::int64_t j = 0; j < C; ++j) {
        double p = std::exp(static_cast<double>(z[j]) - lse);
        double tj = t ? t[j] : (j == label ? 1.0 : 0.0);
        g[j] = static_cast<float>((p * tsum - tj) * gs);
      }
    }
    return loss;
  }
  // Probabilities: q = p / Σp, clipped; d/dp_k = (−[k kept]·t_k/q_k + Σ_j [j kept]·t_j) / Σp.
  double S = 0.0;
  for (std::int64_t j = 0; j < C; ++j) S += z[j];
  float inv_s = static_cast<float>(1.0 / S);
  double kept_t = 0.0;
  if (t) {
    for (std::int64_t j = 0; j < C; ++j) {
      float q = z[j] * inv_s;
      loss -= t[j] * std::log(static_cast<double>(clip_prob(q)));
      if (inside_clip(q)) kept_t += t[j];
    }
  } else {
    float q = z[label] * inv_s;
    loss = -std::log(static_cast<double>(clip_prob(q)));
    if (inside_clip(q)) kept_t = 1.0;
  }
  if (g) {
    for (std::int64_t j = 0; j < C; ++j) {
      float q = z[j] * inv_s;
      double tj = t ? t[j] : (j == label ? 1.0 : 0.0);
      double own = (tj != 0.0 && inside_clip(q)) ? tj / q : 0.0;
      g[j] = static_cast<float>((kept_t - own) / S * gs);
    }
  }
  return loss;
}

// loss[n] = mean of row_loss(r) over example n's rows (several rows per example when pred has
// axes between the batch and the class axis).
template <class RowValue>
void mean_over_rows(const RowLayout& l, float* loss, RowValue&& row_loss) {
  parallel_for(l.examples, example_grain(l), [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t n = b; n < e; ++n) {
      double total = 0.0;
      for (std::int64_t r = n * l.per_example; r < (n + 1) * l.per_example; ++r) total += row_loss(r);
      loss[n] = static_cast<float>(total / static_cast<double>(l.per_example));
    }
  });
}

}  // namespace

void CpuBackend::sparse_categorical_crossentropy(const Tensor& pred, const Tensor& labels, bool from_logits,
                                                 Tensor& loss, Tensor& grad, float grad_scale) {
  enter();
  const char* op = "sparse_categorical_crossentropy";
  RowLayout l = class_rows(pred, op);
  require_labels(labels, pred, l.rows, op);
  check_label_range(labels, l.width, pred, op);
  float* pg = prepare_loss_outputs(pred, loss, grad, l.examples, op);
  const float* pp = pred.data<float>();
  float* pl = loss.data<float>();
  const float gs = l.per_example ? grad_scale / static_cast<float>(l.per_example) : 0.f;
  visit_labels(labels, [&](const auto* lab) {
    mean_over_rows(l, pl, [&](std::int64_t r) {
      return crossentropy_row(pp + r * l.width, nullptr, static_cast<std::int64_t>(lab[r]), l.width, from_logits,
                              pg ? pg + r * l.width : nullptr, gs);
    });
  });
}

void CpuBackend::categorical_crossentropy(const Tensor& pred, const Tensor& target, bool from_logits, Tensor& loss,
                                          Tensor& grad, float grad_scale) {
  enter();
  const char* op = "categorical_crossentropy";
  RowLayout l = class_rows(pred, op);
  require_float(target, op, "target");
  op_shapes::check_one_hot_target(target, pred, op);
  float* pg = prepare_loss_outputs(pred, loss, grad, l.examples, op);
  const float* pp = pred.data<float>();
  const float* pt = target.data<float>();
  float* pl = loss.data<float>();
  const float gs = l.per_example ? grad_scale / static_cast<float>(l.per_example) : 0.f;
  mean_over_rows(l, pl, [&](std::int64_t r) {
    return crossentropy_row(pp + r * l.width, pt + r * l.width, 0, l.width, from_logits,
                            pg ? pg + r * l.width : nullptr, gs);
  });
}

namespace {

// The loop of every elementwise loss over [examples, width]: an example's loss is the mean of
// term(x, t, gs, g) over its values (summed in double, in order); term writes the gradient into
// *g when g is not null. gs = grad_factor * grad_scale / width.
template <class Term>
void elementwise_loss(const Tensor& pred, const Tensor& target, Tensor& loss, Tensor& grad, float grad_factor,
                      float grad_scale, const char* op, Term term) {
  RowLayout l = element_rows(pred, op);
  require_target(target, pred, op);
  float* pg = prepare_loss_outputs(pred, loss, grad, l.examples, op);
  const float* pp = pred.data<float>();
  const float* pt = target.data<float>();
  float* pl = loss.data<float>();
  const std::int64_t D = l.width;
  const float gs = D ? grad_factor * grad_scale / static_cast<float>(D) : 0.f;
  parallel_for(l.examples, example_grain(l), [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t n = b; n < e; ++n) {
      double total = 0.0;
      for (std::int64_t i = n * D; i < (n + 1) * D; ++i) total += term(pp[i], pt[i], gs, pg ? pg + i : nullptr);
      pl[n] = D ? static_cast<float>(total / static_cast<double>(D)) : 0.f;
    }
  });
}

}  // namespace

void CpuBackend::binary_crossentropy(const Tensor& pred, const Tensor& target, bool from_logits, Tensor& loss,
                                     Tensor& grad, float grad_scale) {
  enter();
  elementwise_loss(
      pred, target, loss, grad, 1.f, grad_scale, "binary_crossentropy",
      [&](float x, float t, float gs, float* g) -> double {
        if (from_logits) {
          // −t·log σ(x) − (1−t)·log(1−σ(x)) = max(x,0) − x·t + log(1 + e^−|x|)
          if (g) *g = (1.f / (1.f + std::exp(-x)) - t) * gs;
          return std::max(x, 0.f) - static_cast<double>(x) * t + std::log1p(std::exp(-std::fabs(x)));
        }
        const float p = clip_prob(x);
        if (g)
          *g = inside_clip(x) ? static_cast<float>((-t / static_cast<double>(x) + (1.0 - t) / (1.0 - x)) * gs) : 0.f;
        return -(t * std::log(static_cast<double>(p)) + (1.0 - t) * std::log(1.0 - p));
      });
}

void CpuBackend::mean_squared_error(const Tensor& pred, const Tensor& target, Tensor& loss, Tensor& grad,
                                    float grad_scale) {
  enter();
  elementwise_loss(pred, target, loss, grad, 2.f, grad_scale, "mean_squared_error",
                   [](float x, float t, float gs, float* g) -> double {
                     const float d = x - t;
                     if (g) *g = d * gs;
                     return static_cast<double>(d) * d;
                   });
}

void CpuBackend::huber(const Tensor& pred, const Tensor& target, float delta, Tensor& loss, Tensor& grad,
                       float grad_scale) {
  enter();
  elementwise_loss(pred, target, loss, grad, 1.f, grad_scale, "huber",
                   [delta](float x, float t, float gs, float* g) -> double {
                     const float d = x - t, q = std::min(std::fabs(d), delta);
                     if (g) *g = std::clamp(d, -delta, delta) * gs;
                     return 0.5 * static_cast<double>(q) * q + static_cast<double>(delta) * (std::fabs(d) - q);
                   });
}

void CpuBackend::row_loss(RowLoss kind, const RowLossParams& params, const Tensor& pred, const Tensor& target,
                          Tensor& loss, Tensor& grad, float grad_scale) {
  enter();
  const char* op = op_shapes::row_loss_name(kind);
  require_float(pred, op, "pred");
  const bool labelled = row_losses::takes_labels(kind);
  if (!labelled) require_float(target, op, "target");
  const RowLayout l = op_shapes::row_loss_rows_of(kind, pred, target, grad.defined());
  if (labelled) {
    require_labels(target, pred, l.rows, op);
    check_label_range(target, l.width, pred, op);
  }
  float* pg = prepare_loss_outputs(pred, loss, grad, l.examples, op);
  const float* pp = pred.data<float>();
  const float* pt = labelled ? nullptr : target.data<float>();
  float* pl = loss.data<float>();
  const double gs = l.per_example ? static_cast<double>(grad_scale) / static_cast<double>(l.per_example) : 0.0;
  mean_over_rows(l, pl, [&](std::int64_t r) {
    const std::int64_t at = r * l.width;
    return row_losses::row_loss_value(kind, params, pp + at, pt ? pt + at : nullptr,
                                      labelled ? label_at(target, r) : -1, l.width, pg ? pg + at : nullptr, gs);
  });
}

}  // namespace kerascpp::cpu
