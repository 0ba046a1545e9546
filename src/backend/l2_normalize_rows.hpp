// The scale factor of Backend::l2_normalize_rows, shared by the CPU and CUDA backends so both
// clamp alike: Keras' ops.normalize(order=2) multiplies a row by min(1/√Σx², 1/ε), ε = 1e-7, so a
// zero row stays zero (and its factor is then a constant for the gradient).
#pragma once
#include <cmath>

#include "backend/host_device.hpp"

namespace kerascpp::op_shapes {

inline constexpr float kL2NormalizeMaxFactor = 1.f / 1e-7f;

// min(1/√squares, 1/ε), NaN when squares is NaN (as std::min(v, 1/ε) gives).
KERASCPP_HOST_DEVICE inline float l2_normalize_factor(float squares) {
  const float v = 1.f / sqrtf(squares);
  return kL2NormalizeMaxFactor < v ? kL2NormalizeMaxFactor : v;
}

// Whether the factor was clamped (or is NaN): the backward then treats it as a constant.
KERASCPP_HOST_DEVICE inline bool l2_normalize_clamped(float factor) { return !(factor < kL2NormalizeMaxFactor); }

}  // namespace kerascpp::op_shapes
