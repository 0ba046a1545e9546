#include "backend/cpu/batchnorm_stats.hpp"

#include <algorithm>
#include <cmath>

#include "backend/cpu/parallel.hpp"

namespace kerascpp::cpu::bn {

void moments(const float* x, std::int64_t rows, std::int64_t channels, std::vector<double>& partials, double* mean,
             double* var) {
  const std::int64_t C = channels;
  // The shift: the first row. Any value near the data would do; this one needs no extra pass.
  std::vector<double> shift(x, x + C);
  const double* k = shift.data();
  // 2·C sums: Σ(x−k), then Σ(x−k)².
  std::vector<double> sums(static_cast<std::size_t>(2 * C));
  chunked_row_sums(rows, C, 2 * C, partials, sums.data(), [&](std::int64_t r0, std::int64_t r1, double* acc) {
    double* sq = acc + C;
    for (std::int64_t r = r0; r < r1; ++r) {
      const float* row = x + r * C;
      for (std::int64_t c = 0; c < C; ++c) {
        double d = static_cast<double>(row[c]) - k[c];
        acc[c] += d;
        sq[c] += d * d;
      }
    }
  });
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
    double* xmu = acc + C;
    for (std::int64_t r = r0; r < r1; ++r) {
      const float* xr = x + r * C;
      const float* gr = dy + r * C;
      for (std::int64_t c = 0; c < C; ++c) {
        double g = gr[c];
        acc[c] += g;
        xmu[c] += g * (static_cast<double>(xr[c]) - mean[c]);
      }
    }
  });
  std::copy_n(sums.data(), C, sum_dy);
  std::copy_n(sums.data() + C, C, sum_dy_xmu);
}

void grad_apply(const float* dy, const float* x, const float* gamma, const float* mean, const float* var, float eps,
                const double* sum_dy, const double* sum_dy_xmu, double count, std::int64_t rows,
                std::int64_t channels, float* coef, float* dx) {
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
  parallel_for(rows, grain, [&](std::int64_t r0, std::int64_t r1) {
    for (std::int64_t r = r0; r < r1; ++r)
      for (std::int64_t c = 0; c < C; ++c) {
        std::int64_t i = r * C + c;
        dx[i] = ca[c] * dy[i] + cb[c] * (x[i] - mean[c]) + cd[c];
      }
  });
}

}  // namespace kerascpp::cpu::bn
