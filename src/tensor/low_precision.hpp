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

// IEEE binary16, by hand: _Float16 is not available in every compiler the project builds with
// (clang 14, used for the fuzz build, lacks it on x86). Round to nearest even, subnormals and
// overflow to Inf as IEEE; a NaN stays a quiet NaN with its payload's top bits, as F16C's
// VCVTPS2PH does. Checked once against F16C on every float32 and float16 bit pattern; the tests
// compare the two on a thousand values.
inline std::uint16_t float_to_half(float f) {
  std::uint32_t x;
  std::memcpy(&x, &f, sizeof x);
  const auto sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
  const std::uint32_t a = x & 0x7fffffffu;
  if (a > 0x7f800000u) return static_cast<std::uint16_t>(sign | 0x7e00u | ((a >> 13) & 0x3ffu));  // NaN
  if (a >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // >= 65520 rounds to Inf
  auto round_shift = [](std::uint32_t m, std::uint32_t shift) {             // m >> shift, to nearest even
    std::uint32_t h = m >> shift;
    const std::uint32_t rest = m & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rest > half || (rest == half && (h & 1u))) ++h;
    return h;
  };
  if (a < 0x33000000u) return sign;  // below 2^-25: rounds to zero
  if (a < 0x38800000u) {             // below 2^-14: a subnormal in units of 2^-24
    const std::uint32_t m = (a & 0x7fffffu) | 0x800000u;
    return static_cast<std::uint16_t>(sign | round_shift(m, 126u - (a >> 23)));
  }
  // Normal: rebias the exponent (127 -> 15) and round away 13 mantissa bits; a carry out of the
  // mantissa moves into the exponent, as it should.
  return static_cast<std::uint16_t>(sign | round_shift(a - 0x38000000u, 13));
}

inline float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1fu, mantissa = h & 0x3ffu;
  std::uint32_t bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13) | (mantissa ? 0x400000u : 0u);  // Inf; NaN made quiet, as F16C
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112u) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;
  } else {  // subnormal: mantissa * 2^-24, normalised for float32
    std::uint32_t m = mantissa, shifts = 0;
    while (!(m & 0x400u)) {
      m <<= 1;
      ++shifts;
    }
    bits = sign | ((113u - shifts) << 23) | ((m & 0x3ffu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

}  // namespace kerascpp::low_precision
