// Keras 3's bilinear resize along one axis by an integer factor, as both backends compute it
// (CPU loops in backend/cpu/resize.cpp, CUDA kernels in cuda/kernels/resize.cu): output o of an
// axis of n inputs upsampled `times` times samples input coordinate (o + 0.5) / times - 0.5 (half
// pixel centres, ops.image.resize with antialias=False) with triangle weights renormalised where
// the kernel leaves the image (the numpy backend's _compute_weight_mat), which is the same as
// clamping the two taps to [0, n - 1].
#pragma once
#include <cstdint>

#include "backend/host_device.hpp"

namespace kerascpp::linear_resize {

struct Taps {
  std::int64_t lo, hi;  // the two inputs read (equal at the edges)
  float w_lo, w_hi;     // their weights, summing to 1
};

KERASCPP_HOST_DEVICE inline Taps taps(std::int64_t o, std::int64_t n, std::int64_t times) {
  const double sample = (double(o) + 0.5) / double(times) - 0.5;
  // floor for sample >= -0.5: the only negative case is in [-0.5, 0), whose floor is -1.
  const std::int64_t lo = sample < 0 ? -1 : static_cast<std::int64_t>(sample);
  const double frac = sample - double(lo);
  Taps t;
  t.lo = lo < 0 ? 0 : lo;
  t.hi = lo + 1 > n - 1 ? n - 1 : lo + 1;
  t.w_lo = static_cast<float>(1.0 - frac);
  t.w_hi = static_cast<float>(frac);
  return t;
}

// The weight of input i in output o (0 unless i is one of its taps; both when they coincide).
KERASCPP_HOST_DEVICE inline float weight(std::int64_t o, std::int64_t i, std::int64_t n, std::int64_t times) {
  const Taps t = taps(o, n, times);
  return (t.lo == i ? t.w_lo : 0.f) + (t.hi == i ? t.w_hi : 0.f);
}

// Outputs that can read input i: [first_output(i), last_output(i)) (a taps' reach is < 1 input).
KERASCPP_HOST_DEVICE inline std::int64_t first_output(std::int64_t i, std::int64_t times) {
  return i > 0 ? (i - 1) * times : 0;
}
KERASCPP_HOST_DEVICE inline std::int64_t last_output(std::int64_t i, std::int64_t n, std::int64_t times) {
  return (i + 2) * times < n * times ? (i + 2) * times : n * times;
}

}  // namespace kerascpp::linear_resize
