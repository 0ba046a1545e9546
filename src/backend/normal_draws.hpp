// Backend::random_normal's draws, shared by the CPU loop and the CUDA kernel so both draw alike:
// element i takes two 24-bit uniforms from the SplitMix64 finaliser of counters 2i and 2i + 1
// after a seed-derived base (as dropout's masks do), and the Box-Muller transform makes them one
// standard normal. Counter-based, so the draws do not depend on threads or launch shapes; host
// and device logf/cosf may differ in the last bits.
#pragma once
#include <cmath>
#include <cstdint>

#include "backend/host_device.hpp"

namespace kerascpp::op_shapes {

KERASCPP_HOST_DEVICE inline std::uint64_t normal_mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// The base of a seed's counters (computed once per call).
KERASCPP_HOST_DEVICE inline std::uint64_t normal_base(std::uint64_t seed) {
  return normal_mix64(seed + 0x2545f4914f6cdd1dULL);
}

// Standard normal draw i of the stream `base`.
KERASCPP_HOST_DEVICE inline float normal_draw(std::uint64_t base, std::int64_t i) {
  const auto c = static_cast<std::uint64_t>(i) * 2;
  const std::uint64_t a = normal_mix64(base + c * 0x9e3779b97f4a7c15ULL) >> 40;
  const std::uint64_t b = normal_mix64(base + (c + 1) * 0x9e3779b97f4a7c15ULL) >> 40;
  const float u1 = (static_cast<float>(a) + 1.f) * (1.f / 16777216.f);  // (0, 1]: log stays finite
  const float u2 = static_cast<float>(b) * (1.f / 16777216.f);          // [0, 1)
  return sqrtf(-2.f * logf(u1)) * cosf(6.28318530717958647692f * u2);
}

}  // namespace kerascpp::op_shapes
