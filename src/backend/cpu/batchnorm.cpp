// Batch normalization over the last axis, x viewed as [M, C]. The reductions (batch statistics,
// gradient sums) are batchnorm_stats' double, fixed-order sums; the elementwise normalisation
// with given statistics runs on oneDNN, which takes x as an NHWC tensor (M, C, 1, 1), the same
// bytes. The moments themselves are moments.cpp. gamma or beta may be undefined (Keras scale=False / center=False):
// ones and zeros stand in for them.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "backend/cpu/batchnorm_stats.hpp"
#include "backend/cpu/checks.hpp"
#include "backend/cpu/cpu_backend.hpp"
#include "backend/cpu/dnnl_util.hpp"
#include "check.hpp"

namespace kerascpp::cpu {

namespace {

struct BatchNormEntry : CacheEntry {
  CachedPrimitive prim;
};

const auto kScaleShift = dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift;

dnnl::memory::desc data_md(std::int64_t rows, std::int64_t channels) {
  return f32_md({rows, channels, 1, 1}, tag::nhwc);
}

// Channels of x viewed as [M, C] (shared with the CUDA backend); per-channel tensors are
// checked for the host and float32 here, for their shape there.
using op_shapes::channels_of;

void require_channel_vector(const Tensor& t, std::int64_t channels, const Tensor& x, const char* op, const char* arg) {
  require_float(t, op, arg);
  op_shapes::check_channel_vector(t, channels, x, op, arg);
}

// Binds gamma and beta as the scale and shift, with ones and zeros (in `scratch`) standing in for
// an undefined one.
void bind_scale_shift(CachedPrimitive& p, const Tensor& gamma, const Tensor& beta, ScratchBuffer& scratch,
                      std::int64_t channels) {
  float* ones = scratch.floats(2 * channels);
  std::fill(ones, ones + channels, 1.f);
  std::fill(ones + channels, ones + 2 * channels, 0.f);
  p.bind(DNNL_ARG_SCALE, gamma.defined() ? gamma.raw() : ones);
  p.bind(DNNL_ARG_SHIFT, beta.defined() ? beta.raw() : ones + channels);
}

}  // namespace

void CpuBackend::batchnorm_forward_training(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps,
                                            Tensor& y, Tensor& mean, Tensor& var) {
  enter();
  const char* op = "batchnorm_forward_training";
  require_float(x, op, "x");
  const std::int64_t C = channels_of(x, op), M = C == 0 ? 0 : x.numel() / C;
  if (gamma.defined()) require_channel_vector(gamma, C, x, op, "gamma");
  if (beta.defined()) require_channel_vector(beta, C, x, op, "beta");
  prepare_output(y, x.shape(), op, "y");
  // The statistics come from moments (bn::moments: double, fixed order), not from oneDNN's
  // fused training primitive, whose float sums lose accuracy and change with the thread count;
  // normalising with given statistics is then oneDNN's elementwise inference kernel.
  KERASCPP_CHECK_SHAPE(C == 0 || M > 0, "{}: x {} holds no rows; batch statistics need at least one", op,
                       shape_str(x.shape()));
  moments(x, mean, var);
  if (C == 0) return;
  batchnorm_forward_inference(x, gamma, beta, mean, var, eps, y);
}

void CpuBackend::batchnorm_forward_inference(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                             const Tensor& mean, const Tensor& var, float eps, Tensor& y) {
  enter();
  const char* op = "batchnorm_forward_inference";
  require_float(x, op, "x");
  const std::int64_t C = channels_of(x, op), M = C == 0 ? 0 : x.numel() / C;
  if (gamma.defined()) require_channel_vector(gamma, C, x, op, "gamma");
  if (beta.defined()) require_channel_vector(beta, C, x, op, "beta");
  require_channel_vector(mean, C, x, op, "mean");
  require_channel_vector(var, C, x, op, "var");
  prepare_output(y, x.shape(), op, "y");
  if (M == 0 || C == 0) return;
  cache_.key("bn_fwd_infer");
  cache_.append(M, C, eps);
  auto& e = cache_.get<BatchNormEntry>([&] {
    return guarded_build(op, cache_.current_key(), [&] {
      dnnl::batch_normalization_forward::desc desc(dnnl::prop_kind::forward_inference, data_md(M, C), eps,
                                                   kScaleShift | dnnl::normalization_flags::use_global_stats);
      dnnl::batch_normalization_forward::primitive_desc pd(desc, base_attr(), engine_);
      auto entry = std::make_unique<BatchNormEntry>();
      entry->prim = make_primitive(
          pd, {DNNL_ARG_SRC, DNNL_ARG_SCALE, DNNL_ARG_SHIFT, DNNL_ARG_MEAN, DNNL_ARG_VARIANCE, DNNL_ARG_DST});
      return entry;
    });
  });
  bind_scale_shift(e.prim, gamma, beta, channel_a_, C);
  e.prim.bind(DNNL_ARG_SRC, x.raw());
  e.prim.bind(DNNL_ARG_MEAN, mean.raw());
  e.prim.bind(DNNL_ARG_VARIANCE, var.raw());
  e.prim.bind(DNNL_ARG_DST, y.raw());
  run(e.prim);
}

void CpuBackend::batchnorm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& mean,
                                    const Tensor& var, float eps, Tensor& dx, Tensor& dgamma, Tensor& dbeta) {
  enter();
  const char* op = "batchnorm_backward";
  require_float(dy, op, "dy");
  require_float(x, op, "x");
  require_same_shape(dy, "dy", x, "x", op);
  const std::int64_t C = channels_of(x, op), M = C == 0 ? 0 : x.numel() / C;
  if (gamma.defined()) require_channel_vector(gamma, C, x, op, "gamma");
  require_channel_vector(mean, C, x, op, "mean");
  require_channel_vector(var, C, x, op, "var");
  prepare_output(dx, x.shape(), op, "dx");
  // Undefined dgamma/dbeta mean the layer has no such parameter: their values go to scratch.
  float* scratch = channel_b_.floats(2 * C);
  float* pdgamma = scratch;
  float* pdbeta = scratch + C;
  if (dgamma.defined()) {
    prepare_output(dgamma, {C}, op, "dgamma");
    pdgamma = dgamma.data<float>();
  }
  if (dbeta.defined()) {
    prepare_output(dbeta, {C}, op, "dbeta");
    pdbeta = dbeta.data<float>();
  }
  if (C == 0) return;
  if (M == 0) {
    std::fill(pdgamma, pdgamma + C, 0.f);
    std::fill(pdbeta, pdbeta + C, 0.f);
    return;
  }
  // Σdy and Σdy·(x − mean) in double and fixed order (see batchnorm_stats.hpp), then the
  // elementwise input gradient; the statistics' own dependence on x is part of the formula.
  sums_.resize(static_cast<std::size_t>(2 * C));
  double* sum_dy = sums_.data();
  double* sum_dy_xmu = sums_.data() + C;
  const float* pmean = mean.data<float>();
  const float* pvar = var.data<float>();
  bn::grad_sums(dy.data<float>(), x.data<float>(), pmean, M, C, partials_, sum_dy, sum_dy_xmu);
  for (std::int64_t c = 0; c < C; ++c) {
    pdbeta[c] = static_cast<float>(sum_dy[c]);
    pdgamma[c] = static_cast<float>(sum_dy_xmu[c] / std::sqrt(static_cast<double>(pvar[c]) + eps));
  }
  bn::grad_apply(dy.data<float>(), x.data<float>(), gamma.defined() ? gamma.data<float>() : nullptr, pmean, pvar, eps,
                 sum_dy, sum_dy_xmu, static_cast<double>(M), M, C, channel_a_.floats(3 * C), dx.data<float>());
}

void CpuBackend::moving_average_update(Tensor& moving, const Tensor& value, float momentum) {
  enter();
  const char* op = "moving_average_update";
  require_float(moving, op, "moving");
  require_float(value, op, "value");
  require_same_shape(value, "value", moving, "moving", op);
  float* pm = moving.data<float>();
  const float* pv = value.data<float>();
  // Three roundings per element (two products, one sum), as the CUDA backend does them.
  for (std::int64_t i = 0; i < moving.numel(); ++i) pm[i] = pm[i] * momentum + pv[i] * (1.f - momentum);
}

}  // namespace kerascpp::cpu
