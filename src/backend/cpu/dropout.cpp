// Inverted dropout with a counter-based generator: element i's draw depends only on (seed, i),
// so the mask is the same for any thread count and any split of the loop.
#include <fmt/format.h>

#include "backend/cpu/checks.hpp"
#include "backend/cpu/cpu_backend.hpp"
#include "backend/cpu/parallel.hpp"

namespace kerascpp::cpu {

namespace {

// SplitMix64 finaliser: a strong 64-bit mix, so consecutive counters give independent bits.
inline std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

void CpuBackend::dropout_forward(const Tensor& x, float rate, std::uint64_t seed, Tensor& y, Tensor& mask) {
  enter();
  const char* op = "dropout_forward";
  require_float(x, op, "x");
  if (!(rate >= 0.f && rate < 1.f))
    throw ValueError(
        fmt::format("{}: rate {} is outside [0, 1); Dropout's rate is the fraction of inputs to drop", op, rate));
  prepare_output(y, x.shape(), op, "y");
  prepare_output(mask, x.shape(), op, "mask");
  const float keep_scale = 1.f / (1.f - rate);
  // Compare 24 random bits against rate·2^24: exact float uniforms in [0, 1).
  const std::uint64_t threshold = static_cast<std::uint64_t>(static_cast<double>(rate) * 16777216.0);
  const std::uint64_t base = mix64(seed + 0x9e3779b97f4a7c15ULL);
  const float* px = x.data<float>();
  float* py = y.data<float>();
  float* pm = mask.data<float>();
  parallel_for(x.numel(), kElementGrain, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t i = b; i < e; ++i) {
      std::uint64_t bits = mix64(base + static_cast<std::uint64_t>(i) * 0x9e3779b97f4a7c15ULL) >> 40;
      float m = bits >= threshold ? keep_scale : 0.f;
      pm[i] = m;
      py[i] = px[i] * m;
    }
  });
}

}  // namespace kerascpp::cpu
