// The overflow check of LossScaleOptimizer on the CPU.
#include <cstdint>
#include <cstring>

#include "backend/cpu/checks.hpp"
#include "backend/cpu/cpu_backend.hpp"
#include "backend/cpu/parallel.hpp"

namespace kerascpp::cpu {

namespace {
// Inf and NaN are the floats whose exponent bits are all ones. Tested on the bits, not with
// std::isfinite, which a fast-math build may fold to `true`.
bool non_finite(float v) {
  std::uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return (bits & 0x7f800000u) == 0x7f800000u;
}
}  // namespace

bool CpuBackend::all_finite(const std::vector<Tensor>& xs) {
  enter();
  for (const Tensor& x : xs) {
    require_float(x, "all_finite", "x");
    const float* p = x.data<float>();
    // Counts, exact in double; chunks as every reduction here, so threads do not race on a flag.
    const double bad = chunked_sum(x.numel(), partials_, [&](std::int64_t begin, std::int64_t end) {
      std::int64_t n = 0;
      for (std::int64_t i = begin; i < end; ++i) n += non_finite(p[i]) ? 1 : 0;
      return static_cast<double>(n);
    });
    if (bad > 0) return false;
  }
  return true;
}

}  // namespace kerascpp::cpu
