// Layer normalization on the CPU: a plain fixed-order loop rather than oneDNN's
// layer_normalization primitive, so the arithmetic (row sums in double, in index order) is the
// same for every thread count and easy to mirror in the CUDA kernel. Rows are independent and
// run in parallel; the gamma/beta gradients (sums over rows) are formed per fixed chunk of rows
// and the chunk partials added in chunk order, so they too are independent of the thread count.
#include <algorithm>
#include <cmath>
#include <vector>

#include "backend/cpu/checks.hpp"
#include "backend/cpu/cpu_backend.hpp"
#include "backend/cpu/parallel.hpp"
#include "check.hpp"

namespace kerascpp::cpu {

namespace {

constexpr std::int64_t kRowsPerChunk = 64;  // rows per partial of the dgamma/dbeta sums

void require_row_vector(const Tensor& t, std::int64_t rows, const Tensor& x, const char* op, const char* arg) {
  require_float(t, op, arg);
  KERASCPP_CHECK_SHAPE(t.rank() == 1 && t.numel() == rows,
                       "{}: {} has shape {} but x {} has {} rows; pass the ({},) row statistics that "
                       "layer_norm_forward returned for this x",
                       op, arg, shape_str(t.shape()), shape_str(x.shape()), rows, rows);
}

}  // namespace

void CpuBackend::layer_norm_forward(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps, Tensor& y,
                                    Tensor& mean, Tensor& rstd) {
  enter();
  const char* op = "layer_norm_forward";
  require_float(x, op, "x");
  require_rank_at_least(x, 1, op, "x");
  const std::int64_t C = x.dim(-1), M = C == 0 ? 0 : x.numel() / C;
  if (gamma.defined()) {
    require_float(gamma, op, "gamma");
    op_shapes::check_channel_vector(gamma, C, x, op, "gamma");
  }
  if (beta.defined()) {
    require_float(beta, op, "beta");
    op_shapes::check_channel_vector(beta, C, x, op, "beta");
  }
  KERASCPP_CHECK_VALUE(eps > 0.f, "{}: eps must be > 0, got {}", op, eps);
  prepare_output(y, x.shape(), op, "y");
  prepare_output(mean, {M}, op, "mean");
  prepare_output(rstd, {M}, op, "rstd");
  const float* px = x.data<float>();
  const float* pg = gamma.defined() ? gamma.data<float>() : nullptr;
  const float* pb = beta.defined() ? beta.data<float>() : nullptr;
  float* py = y.data<float>();
  float* pm = mean.data<float>();
  float* pr = rstd.data<float>();
  parallel_for(M, std::max<std::int64_t>(1, kElementGrain / std::max<std::int64_t>(C, 1)),
               [&](std::int64_t r0, std::int64_t r1) {
                 for (std::int64_t r = r0; r < r1; ++r) {
                   const float* xr = px + r * C;
                   double s = 0.0;
                   for (std::int64_t c = 0; c < C; ++c) s += xr[c];
                   const double mu = s / static_cast<double>(C);
                   double ss = 0.0;
                   for (std::int64_t c = 0; c < C; ++c) {
                     const double d = xr[c] - mu;
                     ss += d * d;
                   }
                   const double var = ss / static_cast<double>(C);
                   const float m = static_cast<float>(mu);
                   const float inv = static_cast<float>(1.0 / std::sqrt(var + static_cast<double>(eps)));
                   pm[r] = m;
                   pr[r] = inv;
                   float* yr = py + r * C;
                   for (std::int64_t c = 0; c < C; ++c) {
                     float v = (xr[c] - m) * inv;
                     if (pg) v *= pg[c];
                     if (pb) v += pb[c];
                     yr[c] = v;
                   }
                 }
               });
}

void CpuBackend::layer_norm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& mean,
                                     const Tensor& rstd, Tensor& dx, Tensor& dgamma, Tensor& dbeta) {
  enter();
  const char* op = "layer_norm_backward";
  require_float(dy, op, "dy");
  require_float(x, op, "x");
  require_same_shape(dy, "dy", x, "x", op);
  require_rank_at_least(x, 1, op, "x");
  const std::int64_t C = x.dim(-1), M = C == 0 ? 0 : x.numel() / C;
  if (gamma.defined()) {
    require_float(gamma, op, "gamma");
    op_shapes::check_channel_vector(gamma, C, x, op, "gamma");
  }
  require_row_vector(mean, M, x, op, "mean");
  require_row_vector(rstd, M, x, op, "rstd");
  prepare_output(dx, x.shape(), op, "dx");
  if (dgamma.defined()) prepare_output(dgamma, {C}, op, "dgamma");
  if (dbeta.defined()) prepare_output(dbeta, {C}, op, "dbeta");
  const float* pdy = dy.data<float>();
  const float* px = x.data<float>();
  const float* pg = gamma.defined() ? gamma.data<float>() : nullptr;
  const float* pm = mean.data<float>();
  const float* pr = rstd.data<float>();
  float* pdx = dx.data<float>();

  // dx = rstd·(g − mean(g) − x̂·mean(g·x̂)) with g = dy·gamma, x̂ = (x − mean)·rstd, per row.
  parallel_for(M, std::max<std::int64_t>(1, kElementGrain / std::max<std::int64_t>(C, 1)),
               [&](std::int64_t r0, std::int64_t r1) {
                 for (std::int64_t r = r0; r < r1; ++r) {
                   const float* dyr = pdy + r * C;
                   const float* xr = px + r * C;
                   const float m = pm[r], inv = pr[r];
                   double sg = 0.0, sgx = 0.0;
                   for (std::int64_t c = 0; c < C; ++c) {
                     const double g = pg ? static_cast<double>(dyr[c]) * pg[c] : dyr[c];
                     sg += g;
                     sgx += g * static_cast<double>((xr[c] - m) * inv);
                   }
                   const float mg = static_cast<float>(sg / static_cast<double>(C));
                   const float mgx = static_cast<float>(sgx / static_cast<double>(C));
                   float* dxr = pdx + r * C;
                   for (std::int64_t c = 0; c < C; ++c) {
                     const float g = pg ? dyr[c] * pg[c] : dyr[c];
                     const float xhat = (xr[c] - m) * inv;
                     dxr[c] = inv * (g - mg - xhat * mgx);
                   }
                 }
               });

  if (!dgamma.defined() && !dbeta.defined()) return;
  // Column sums over rows: partials per chunk of kRowsPerChunk rows, then added in chunk order.
  const std::int64_t chunks = (M + kRowsPerChunk - 1) / kRowsPerChunk;
  std::vector<double> part(static_cast<std::size_t>(std::max<std::int64_t>(chunks, 1) * 2 * C), 0.0);
  double* pp = part.data();
#pragma omp parallel for schedule(static) if (chunks > 1)
  for (std::int64_t k = 0; k < chunks; ++k) {
    double* sx = pp + k * 2 * C;  // Σdy·x̂ [C], then Σdy [C]
    double* sd = sx + C;
    const std::int64_t r1 = std::min(M, (k + 1) * kRowsPerChunk);
    for (std::int64_t r = k * kRowsPerChunk; r < r1; ++r) {
      const float* dyr = pdy + r * C;
      const float* xr = px + r * C;
      const float m = pm[r], inv = pr[r];
      for (std::int64_t c = 0; c < C; ++c) {
        sx[c] += static_cast<double>(dyr[c]) * static_cast<double>((xr[c] - m) * inv);
        sd[c] += dyr[c];
      }
    }
  }
  for (std::int64_t c = 0; c < C; ++c) {
    double gx = 0.0, gd = 0.0;
    for (std::int64_t k = 0; k < chunks; ++k) {
      gx += pp[k * 2 * C + c];
      gd += pp[k * 2 * C + C + c];
    }
    if (dgamma.defined()) dgamma.data<float>()[c] = static_cast<float>(gx);
    if (dbeta.defined()) dbeta.data<float>()[c] = static_cast<float>(gd);
  }
}

}  // namespace kerascpp::cpu
