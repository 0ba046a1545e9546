// The decomposed batch normalization used by synchronized BN: per-replica sums that the
// strategy all-reduces, then an elementwise apply. Sums accumulate in double over fixed
// chunks, so they are exact enough for E[x²]−E[x]² and independent of the thread count.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "backend/cpu/batchnorm_stats.hpp"
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
  bn::grad_sums(dy.data<float>(), x.data<float>(), mean.data<float>(), M, C, partials_, sums_.data(),
                sums_.data() + C);
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
  // The all-reduced sums arrive as float; the coefficients are formed in double as in the fused op.
  sums_.resize(static_cast<std::size_t>(2 * C));
  const float* ps = sum_dy.data<float>();
  const float* pq = sum_dy_xmu.data<float>();
  std::copy_n(ps, C, sums_.data());
  std::copy_n(pq, C, sums_.data() + C);
  bn::grad_apply(dy.data<float>(), x.data<float>(), gamma.defined() ? gamma.data<float>() : nullptr,
                 mean.data<float>(), var.data<float>(), eps, sums_.data(), sums_.data() + C, count, M, C,
                 channel_a_.floats(3 * C), dx.data<float>());
}

}  // namespace kerascpp::cpu
