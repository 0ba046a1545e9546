// The decomposed batch-norm backward of synchronized BN: per-replica gradient sums packed for
// one all-reduce (with the local gamma/beta gradients), then the elementwise input gradient
// from the global sums. Sums accumulate in double over fixed chunks (batchnorm_stats.hpp), so
// they are independent of the thread count.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "backend/cpu/batchnorm_stats.hpp"
#include "backend/cpu/checks.hpp"
#include "backend/cpu/cpu_backend.hpp"
#include "check.hpp"

namespace kerascpp::cpu {

namespace {

void require_vector(const Tensor& t, std::int64_t channels, const Tensor& x, const char* op, const char* arg) {
  require_float(t, op, arg);
  op_shapes::check_channel_vector(t, channels, x, op, arg);
}

}  // namespace

void CpuBackend::batchnorm_backward_reduce(const Tensor& dy, const Tensor& x, const Tensor& mean, const Tensor& var,
                                           float eps, Tensor& sums, Tensor& dgamma, Tensor& dbeta) {
  enter();
  const char* op = "batchnorm_backward_reduce";
  require_float(dy, op, "dy");
  require_float(x, op, "x");
  require_same_shape(dy, "dy", x, "x", op);
  require_rank_at_least(x, 1, op, "x");
  const std::int64_t C = x.dim(-1), M = C == 0 ? 0 : x.numel() / C;
  require_vector(mean, C, x, op, "mean");
  require_vector(var, C, x, op, "var");
  prepare_output(sums, {batchnorm_grad_sums_size(C)}, op, "sums");
  if (dgamma.defined()) prepare_output(dgamma, {C}, op, "dgamma");
  if (dbeta.defined()) prepare_output(dbeta, {C}, op, "dbeta");
  sums_.resize(static_cast<std::size_t>(2 * C));
  bn::grad_sums(dy.data<float>(), x.data<float>(), mean.data<float>(), M, C, partials_, sums_.data(), sums_.data() + C);
  // The sums travel as float (one all-reduce with the row count); the parameter gradients are
  // formed from those floats, as every replica's share of the reduced gradient.
  float* sum_dy = sums.data<float>();
  float* sum_dy_xmu = sum_dy + C;
  for (std::int64_t c = 0; c < C; ++c) {
    sum_dy[c] = static_cast<float>(sums_[c]);
    sum_dy_xmu[c] = static_cast<float>(sums_[C + c]);
  }
  sum_dy[2 * C] = static_cast<float>(static_cast<double>(M));
  if (dbeta.defined()) std::copy_n(sum_dy, C, dbeta.data<float>());
  if (dgamma.defined()) {
    const float* pvar = var.data<float>();
    float* pg = dgamma.data<float>();
    for (std::int64_t c = 0; c < C; ++c) pg[c] = sum_dy_xmu[c] / std::sqrt(pvar[c] + eps);
  }
}

void CpuBackend::batchnorm_backward_apply(const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& mean,
                                          const Tensor& var, float eps, const Tensor& sums, Tensor& dx) {
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
  require_float(sums, op, "sums");
  KERASCPP_CHECK_SHAPE(sums.rank() == 1 && sums.numel() == batchnorm_grad_sums_size(C),
                       "{}: sums {} for x {} must be ({},): Σdy, Σdy·(x − mean) and the row count, as "
                       "batchnorm_backward_reduce makes them",
                       op, shape_str(sums.shape()), shape_str(x.shape()), batchnorm_grad_sums_size(C));
  const float* ps = sums.data<float>();
  const double count = ps[2 * C];
  KERASCPP_CHECK_VALUE(count > 0, "{}: the row count in sums is {} but must be the (global) number of rows summed, > 0",
                       op, count);
  prepare_output(dx, x.shape(), op, "dx");
  // The all-reduced sums arrive as float; the coefficients are formed in double as in the fused op.
  sums_.resize(static_cast<std::size_t>(2 * C));
  std::copy_n(ps, C, sums_.data());
  std::copy_n(ps + C, C, sums_.data() + C);
  bn::grad_apply(dy.data<float>(), x.data<float>(), gamma.defined() ? gamma.data<float>() : nullptr, mean.data<float>(),
                 var.data<float>(), eps, sums_.data(), sums_.data() + C, count, M, C, channel_a_.floats(3 * C),
                 dx.data<float>());
}

}  // namespace kerascpp::cpu
