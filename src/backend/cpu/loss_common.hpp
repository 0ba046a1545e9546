// Shape handling shared by the losses and metrics: predictions are viewed as rows of a last
// axis, grouped per example (op_shapes::RowLayout), and every result is per example (rows
// of one example averaged), so the caller's Σ/N matches Keras's mean over all positions.
#pragma once
#include <fmt/format.h>

#include <cstdint>

#include "backend/cpu/checks.hpp"

namespace kerascpp::cpu {

// Keras's backend.epsilon(), used to clip probabilities.
constexpr float kProbEpsilon = 1e-7f;

using op_shapes::RowLayout;

// The shape rules are shared with the CUDA backend (backend/op_shapes.*); here the tensors
// must also be float32 on the host.
inline RowLayout class_rows(const Tensor& pred, const char* op) {
  require_float(pred, op, "pred");
  return op_shapes::class_rows_of(pred, op);
}

inline RowLayout element_rows(const Tensor& pred, const char* op) {
  require_float(pred, op, "pred");
  return op_shapes::element_rows_of(pred, op);
}

inline void require_target(const Tensor& target, const Tensor& pred, const char* op) {
  require_float(target, op, "target");
  op_shapes::check_target_shape(target, pred, op);
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
