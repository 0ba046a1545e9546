#include "backend/cpu/batchnorm_stats.hpp"

#include <algorithm>
#include <cmath>

#include "backend/cpu/parallel.hpp"
#include "simd_clones.hpp"

namespace kerascpp::cpu::bn {

namespace {

// The loops below carry AVX-512 and AVX2 builds next to the baseline (x86-64-v2) one, picked
// at load time. GCC would fuse multiply-adds in the AVX-512 build, rounding differently from
// the others, so contraction is off for them: every build gives the baseline's bits. (Clang
// contracts only within one expression, which these loops never write.)
#if defined(__clang__) || defined(KERASCPP_NO_TARGET_CLONES)
#define KERASCPP_BN_SIMD KERASCPP_SIMD_CLONES
#else
#define KERASCPP_BN_SIMD KERASCPP_SIMD_CLONES __attribute__((optimize("fp-contract=off")))
#endif

// Both the sum driver and the per-element terms are forced inline so that they are compiled
// for each clone's target.
#define KERASCPP_BN_INLINE __attribute__((always_inline)) KERASCPP_SIMD_INLINE_TARGET

// Below this many channels a row is too short to vectorise over: the rows of a chunk are
// walked once per block of W channels instead, with the block's accumulators in registers (a
// chunk is ≤ kReduceChunk floats, so the later passes read L1). Wider rows are walked once,
// accumulating into acc (L1). The order of the additions depends on the channel count only,
// never on the thread count or the instruction set.
constexpr std::int64_t kRowWise = 16;

// Adds terms(r, c, t0, t1)'s two values over rows [r0, r1) into acc0[c] and acc1[c].
template <class Terms>
KERASCPP_BN_INLINE inline void row_sums(std::int64_t r0, std::int64_t r1, std::int64_t C, double* __restrict acc0,
                                        double* __restrict acc1, Terms&& terms) {
  if (C >= kRowWise) {
    // Four rows at a time, added pairwise: a quarter of the accumulator stores.
    std::int64_t r = r0;
    for (; r + 4 <= r1; r += 4) {
#pragma omp simd
      for (std::int64_t c = 0; c < C; ++c) {
        double p0, p1, q0, q1, u0, u1, v0, v1;
        terms(r, c, p0, p1);
        terms(r + 1, c, q0, q1);
        terms(r + 2, c, u0, u1);
        terms(r + 3, c, v0, v1);
        acc0[c] += (p0 + q0) + (u0 + v0);
        acc1[c] += (p1 + q1) + (u1 + v1);
      }
    }
    for (; r < r1; ++r) {
#pragma omp simd
      for (std::int64_t c = 0; c < C; ++c) {
        double t0, t1;
        terms(r, c, t0, t1);
        acc0[c] += t0;
        acc1[c] += t1;
      }
    }
    return;
  }
  auto panel = [&]<std::int64_t W>(std::int64_t c0) KERASCPP_BN_INLINE {
    double a0[W] = {}, a1[W] = {};
    for (std::int64_t r = r0; r < r1; ++r) {
#pragma omp simd
      for (std::int64_t j = 0; j < W; ++j) {
        double t0, t1;
        terms(r, c0 + j, t0, t1);
        a0[j] += t0;
        a1[j] += t1;
      }
    }
    for (std::int64_t j = 0; j < W; ++j) {
      acc0[c0 + j] += a0[j];
      acc1[c0 + j] += a1[j];
    }
  };
  std::int64_t c0 = 0;
  for (; c0 + 8 <= C; c0 += 8) panel.template operator()<8>(c0);
  for (; c0 + 4 <= C; c0 += 4) panel.template operator()<4>(c0);
  for (; c0 < C; ++c0) panel.template operator()<1>(c0);
}

// Σ(x−k) into acc[C] and Σ(x−k)² into sq[C] over rows [r0, r1).
KERASCPP_BN_SIMD void moment_sums(const float* __restrict x, std::int64_t r0, std::int64_t r1, std::int64_t C,
                                  const double* __restrict k, double* __restrict acc, double* __restrict sq) {
  row_sums(r0, r1, C, acc, sq, [&](std::int64_t r, std::int64_t c, double& t0, double& t1) KERASCPP_BN_INLINE {
    double d = static_cast<double>(x[r * C + c]) - k[c];
    t0 = d;
    t1 = d * d;
  });
}

// Σdy into acc[C] and Σdy·(x − mean) into xmu[C] over rows [r0, r1).
KERASCPP_BN_SIMD void gradient_sums(const float* __restrict dy, const float* __restrict x, const float* __restrict mean,
                                    std::int64_t r0, std::int64_t r1, std::int64_t C, double* __restrict acc,
                                    double* __restrict xmu) {
  row_sums(r0, r1, C, acc, xmu, [&](std::int64_t r, std::int64_t c, double& t0, double& t1) KERASCPP_BN_INLINE {
    double g = dy[r * C + c];
    t0 = g;
    t1 = g * (static_cast<double>(x[r * C + c]) - mean[c]);
  });
}

// dx = a·dy + b·(x − mean) + d per channel over rows [r0, r1), in float: elementwise (dx may
// be dy or x: each element is read before it is written, so `omp simd` holds without restrict).
KERASCPP_BN_SIMD void apply_rows(const float* dy, const float* x, const float* __restrict mean,
                                 const float* __restrict ca, const float* __restrict cb, const float* __restrict cd,
                                 std::int64_t r0, std::int64_t r1, std::int64_t C, float* dx) {
  for (std::int64_t r = r0; r < r1; ++r) {
    const std::int64_t o = r * C;
#pragma omp simd
    for (std::int64_t c = 0; c < C; ++c) {
      // One operation per statement: Clang fuses a multiply-add written as one expression.
      float a = ca[c] * dy[o + c];
      float b = cb[c] * (x[o + c] - mean[c]);
      dx[o + c] = a + b + cd[c];
    }
  }
}

}  // namespace

void moments(const float* x, std::int64_t rows, std::int64_t channels, std::vector<double>& partials, double* mean,
             double* var) {
  const std::int64_t C = channels;
  // The shift: the first row. Any value near the data would do; this one needs no extra pass.
  std::vector<double> shift(x, x + C);
  const double* k = shift.data();
  // 2·C sums: Σ(x−k), then Σ(x−k)².
  std::vector<double> sums(static_cast<std::size_t>(2 * C));
  chunked_row_sums(rows, C, 2 * C, partials, sums.data(),
                   [&](std::int64_t r0, std::int64_t r1, double* acc) { moment_sums(x, r0, r1, C, k, acc, acc + C); });
  const double n = static_cast<double>(rows);
  for (std::int64_t c = 0; c < C; ++c) {
    double m = sums[c] / n;
    mean[c] = k[c] + m;
    var[c] = std::max(0.0, sums[C + c] / n - m * m);
  }
}

void grad_sums(const float* dy, const float* x, const float* mean, std::int64_t rows, std::int64_t channels,
               std::vector<double>& partials, double* sum_dy, double* sum_dy_xmu) {
  const std::int64_t C = channels;
  std::vector<double> sums(static_cast<std::size_t>(2 * C));
  chunked_row_sums(rows, C, 2 * C, partials, sums.data(), [&](std::int64_t r0, std::int64_t r1, double* acc) {
    gradient_sums(dy, x, mean, r0, r1, C, acc, acc + C);
  });
  std::copy_n(sums.data(), C, sum_dy);
  std::copy_n(sums.data() + C, C, sum_dy_xmu);
}

void grad_apply(const float* dy, const float* x, const float* gamma, const float* mean, const float* var, float eps,
                const double* sum_dy, const double* sum_dy_xmu, double count, std::int64_t rows, std::int64_t channels,
                float* coef, float* dx) {
  const std::int64_t C = channels;
  // Folded per channel to dx = a·dy + b·(x − mean) + d with a = γ·inv, b = −a·inv²·Σdy(x−μ)/count,
  // d = −a·Σdy/count, computed in double and rounded once.
  float* ca = coef;
  float* cb = coef + C;
  float* cd = coef + 2 * C;
  for (std::int64_t c = 0; c < C; ++c) {
    double inv = 1.0 / std::sqrt(static_cast<double>(var[c]) + eps);
    double a = (gamma ? gamma[c] : 1.0) * inv;
    ca[c] = static_cast<float>(a);
    cb[c] = static_cast<float>(-a * inv * inv * sum_dy_xmu[c] / count);
    cd[c] = static_cast<float>(-a * sum_dy[c] / count);
  }
  // Elementwise: the split over threads cannot change any element.
  std::int64_t grain = std::max<std::int64_t>(1, kElementGrain / std::max<std::int64_t>(C, 1));
  parallel_for(rows, grain,
               [&](std::int64_t r0, std::int64_t r1) { apply_rows(dy, x, mean, ca, cb, cd, r0, r1, C, dx); });
}

}  // namespace kerascpp::cpu::bn
