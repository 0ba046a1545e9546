// Shape handling shared by the losses and metrics: predictions are viewed as rows of a last
// axis, grouped per example, and every result is per example (rows of one example averaged),
// so the caller's Σ/N matches Keras's mean over all positions.
#pragma once
#include <fmt/format.h>

#include <cstdint>

#include "backend/cpu/checks.hpp"

namespace kerascpp::cpu {

// Keras's backend.epsilon(), used to clip probabilities.
constexpr float kProbEpsilon = 1e-7f;

struct RowLayout {
  std::int64_t examples = 0;     // N = pred.dim(0)
  std::int64_t rows = 0;         // rows of the last axis in all of pred
  std::int64_t width = 0;        // length of the last axis (classes)
  std::int64_t per_example = 0;  // rows per example
};

inline RowLayout class_rows(const Tensor& pred, const char* op) {
  require_float(pred, op, "pred");
  if (pred.rank() < 2)
    throw Error(fmt::format("{}: pred has shape {} but must be (batch, ..., classes)", op, shape_str(pred.shape())));
  RowLayout l;
  l.examples = pred.dim(0);
  l.width = pred.dim(-1);
  if (l.width == 0) throw Error(fmt::format("{}: pred {} has zero classes", op, shape_str(pred.shape())));
  l.rows = pred.numel() / l.width;
  l.per_example = l.examples == 0 ? 0 : l.rows / l.examples;
  return l;
}

// Elementwise losses/metrics: each example is one row of all its values.
inline RowLayout element_rows(const Tensor& pred, const char* op) {
  require_float(pred, op, "pred");
  if (pred.rank() < 1) throw Error(fmt::format("{}: pred is a scalar but must have a batch axis", op));
  RowLayout l;
  l.examples = pred.dim(0);
  l.rows = l.examples;
  l.width = l.examples == 0 ? 0 : pred.numel() / l.examples;
  l.per_example = 1;
  return l;
}

// Dense targets have pred's shape; a trailing axis of 1 on either side is tolerated, as Keras
// squeezes it ((N,) targets against (N, 1) predictions).
inline void require_target(const Tensor& target, const Tensor& pred, const char* op) {
  require_float(target, op, "target");
  const Shape& a = target.shape();
  const Shape& b = pred.shape();
  auto drop_one = [](const Shape& s) { return (s.size() > 1 && s.back() == 1) ? Shape(s.begin(), s.end() - 1) : s; };
  bool ok = a == b || drop_one(a) == b || a == drop_one(b);
  if (!ok)
    throw Error(
        fmt::format("{}: target has shape {} but pred has shape {}; they must match", op, shape_str(a), shape_str(b)));
}

// Calls f(const T* labels) with the labels' integer type.
template <class F>
void visit_labels(const Tensor& labels, F&& f) {
  switch (labels.dtype()) {
    case DType::int32:
      f(static_cast<const std::int32_t*>(labels.raw()));
      break;
    case DType::int64:
      f(static_cast<const std::int64_t*>(labels.raw()));
      break;
    case DType::uint8:
      f(static_cast<const std::uint8_t*>(labels.raw()));
      break;
    default:
      break;
  }
}

// First index of the largest value (numpy's argmax tie rule).
inline std::int64_t argmax_row(const float* row, std::int64_t n) {
  std::int64_t best = 0;
  for (std::int64_t j = 1; j < n; ++j)
    if (row[j] > row[best]) best = j;
  return best;
}

}  // namespace kerascpp::cpu
