// Conversions between float32 and the 16-bit float dtypes (bfloat16, float16) on the host, for
// Tensor's accessors and the CPU backend's cast. Round to nearest even, as oneDNN, CUDA and
// numpy (ml_dtypes) do; NaN stays NaN, Inf stays Inf.
#pragma once
#include <cstdint>
#include <cstring>

namespace kerascpp::low_precision {

inline std::uint16_t float_to_bfloat16(float f) {
  std::uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((bits >> 16) | 0x40u);  // quiet NaN
  bits += 0x7fffu + ((bits >> 16) & 1u);  // round half to even on the 16 bits dropped
  return static_cast<std::uint16_t>(bits >> 16);
}

inline float bfloat16_to_float(std::uint16_t b) {
  const std::uint32_t bits = static_cast<std::uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// IEEE binary16 through the compiler's _Float16 (GCC >= 12 and Clang on x86-64 convert with F16C
// where the target has it, else in libgcc), so no hand-written rounding.
inline std::uint16_t float_to_half(float f) {
  const _Float16 h = static_cast<_Float16>(f);
  std::uint16_t bits;
  std::memcpy(&bits, &h, sizeof bits);
  return bits;
}

inline float half_to_float(std::uint16_t bits) {
  _Float16 h;
  std::memcpy(&h, &bits, sizeof h);
  return static_cast<float>(h);
}

}  // namespace kerascpp::low_precision
