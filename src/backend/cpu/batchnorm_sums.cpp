// The decomposed batch normalization used by synchronized BN: per-replica sums that the
// strategy all-reduces, then an elementwise apply. Sums accumulate in double over fixed
// chunks, so they are exact enough for E[x²]−E[x]² and independent of the thread count.
#include <fmt/format.h>

#include <cmath>

#include "backend/cpu/checks.hpp"
#include "backend/cpu/cpu_backend.hpp"
#include "backend/cpu/parallel.hpp"

namespace kerascpp::cpu {

namespace {

void require_vector(const Tensor& t, std::int64_t channels, const Tensor& x, const char* op, const char* arg) {
  require_float(t, op, arg);
  backend_checks::check_channel_vector(t, channels, x, op, arg);
}

}  // namespace

void CpuBackend::batchnorm_sums(const Tensor& x, Tensor& sum, Tensor& sum_squares) {
  enter();
  const char* op = "batchnorm_sums";
  require_float(x, op, "x");
  require_rank_at_least(x, 1, op, "x");
  const std::int64_t C = x.dim(-1), M = C == 0 ? 0 : x.numel() / C;
  prepare_output(sum, {C}, op, "sum");
  prepare_output(sum_squares, {C}, op, "sum_squares");
  sums_.resize(static_cast<std::size_t>(2 * C));
  const float* px = x.data<float>();
  chunked_row_sums(M, C, 2 * C, partials_, sums_.data(), [&](std::int64_t r0, std::int64_t r1, double* acc) {
    double* sq = acc + C;
    for (std::int64_t r = r0; r < r1; ++r) {
      const float* row = px + r * C;
      for (std::int64_t c = 0; c < C; ++c) {
        double v = row[c];
        acc[c] += v;
        sq[c] += v * v;
      }
    }
  });
  float* ps = sum.data<float>();
  float* pq = sum_squares.data<float>();
  for (std::int64_t c = 0; c < C; ++c) {
    ps[c] = static_cast<float>(sums_[c]);
    pq[c] = static_cast<float>(sums_[C + c]);
  }
}

void CpuBackend::batchnorm_backward_sums(const Tensor& dy, const Tensor& x, const Tensor& mean, Tensor& sum_dy,
                                         Tensor& sum_dy_xmu) {
  enter();
  const char* op = "batchnorm_backward_sums";
  require_float(dy, op, "dy");
  require_float(x, op, "x");
  require_same_shape(dy, "dy", x, "x", op);
  require_rank_at_least(x, 1, op, "x");
  const std::int64_t C = x.dim(-1), M = C == 0 ? 0 : x.numel() / C;
  require_vector(mean, C, x, op, "mean");
  prepare_output(sum_dy, {C}, op, "sum_dy");
  prepare_output(sum_dy_xmu, {C}, op, "sum_dy_xmu");
  sums_.resize(static_cast<std::size_t>(2 * C));
  const float* px = x.data<float>();
  const float* pdy = dy.data<float>();
  const float* pm = mean.data<float>();
  chunked_row_sums(M, C, 2 * C, partials_, sums_.data(), [&](std::int64_t r0, std::int64_t r1, double* acc) {
    double* xmu = acc + C;
    for (std::int64_t r = r0; r < r1; ++r) {
      const float* xr = px + r * C;
      const float* gr = pdy + r * C;
      for (std::int64_t c = 0; c < C; ++c) {
        acc[c] += gr[c];
        xmu[c] += static_cast<double>(gr[c]) * (xr[c] - pm[c]);
      }
    }
  });
  float* a = sum_dy.data<float>();
  float* b = sum_dy_xmu.data<float>();
  for (std::int64_t c = 0; c < C; ++c) {
    a[c] = static_cast<float>(sums_[c]);
    b[c] = static_cast<float>(sums_[C + c]);
  }
}

void CpuBackend::batchnorm_backward_apply(const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& mean,
                                          const Tensor& var, float eps, const Tensor& sum_dy, const Tensor& sum_dy_xmu,
                                          double count, Tensor& dx) {
  enter();
  const char* op = "batchnorm_backward_apply";
  require_float(dy, op, "dy");
  require_float(x, op, "x");
  require_same_shape(dy, "dy", x, "x", op);
  require_rank_at_least(x, 1, op, "x");
  const std::int64_t C = x.dim(-1), M = C == 0 ? 0 : x.numel() / C;
  if (gamma.defined()) require_vector(gamma, C, x, op, "gamma");
  require_vector(mean, C, x, op, "mean");
  require_vector(var, C, x, op, "var");
  require_vector(sum_dy, C, x, op, "sum_dy");
  require_vector(sum_dy_xmu, C, x, op, "sum_dy_xmu");
  if (!(count > 0))
    throw Error(fmt::format("{}: count is {} but must be the (global) number of rows summed, > 0", op, count));
  prepare_output(dx, x.shape(), op, "dx");
  // dx = a·dy − a·k1 − (x − mean)·a·k2 with per-channel a = γ·inv, k1 = Σdy/count,
  // k2 = inv²·Σdy(x−μ)/count; folded to dx = a·dy + b·(x − mean) + d.
  float* coef = channel_a_.floats(3 * C);
  float* ca = coef;
  float* cb = coef + C;
  float* cd = coef + 2 * C;
  const float* pg = gamma.defined() ? gamma.data<float>() : nullptr;
  const float* pv = var.data<float>();
  const float* ps = sum_dy.data<float>();
  const float* pq = sum_dy_xmu.data<float>();
  for (std::int64_t c = 0; c < C; ++c) {
    double inv = 1.0 / std::sqrt(static_cast<double>(pv[c]) + eps);
    double a = (pg ? pg[c] : 1.0) * inv;
    ca[c] = static_cast<float>(a);
    cb[c] = static_cast<float>(-a * inv * inv * pq[c] / count);
    cd[c] = static_cast<float>(-a * ps[c] / count);
  }
  const float* px = x.data<float>();
  const float* pdy = dy.data<float>();
  const float* pm = mean.data<float>();
  float* pdx = dx.data<float>();
  std::int64_t grain = std::max<std::int64_t>(1, kElementGrain / std::max<std::int64_t>(C, 1));
  parallel_for(M, grain, [&](std::int64_t r0, std::int64_t r1) {
    for (std::int64_t r = r0; r < r1; ++r)
      for (std::int64_t c = 0; c < C; ++c) {
        std::int64_t i = r * C + c;
        pdx[i] = ca[c] * pdy[i] + cb[c] * (px[i] - pm[c]) + cd[c];
      }
  });
}

}  // namespace kerascpp::cpu
