// Batch normalization over the last axis, x viewed as [M, C] (C = last axis).
//
// By default on kerascpp's own kernels (kernels/reduce.cu): the batch statistics are moments()'
// column sums (the CPU backend's: shifted by the first row, in double, fixed order), the
// normalisation and the backward's dx are elementwise kernels with per-channel coefficients, and
// the backward's sums are synchronized batch norm's column reduction with this replica's rows
// alone. Measured on an H200 (ResNet-50, batch 64, float32; bench/results/h200-2026-11-26):
// 579.8 images/s against 226.3 with cuDNN's batch norm below (268.1 in cuDNN's
// CUDNN_BATCHNORM_SPATIAL_PERSISTENT mode, 225.6 with the real N in the NHWC view), whose
// training kernels had taken 64% of the step's GPU time.
//
// KERASCPP_GPU_BN=cudnn selects cuDNN's fused batch norm instead. x is handed to cuDNN as an
// NHWC tensor (n=1, h, w, c=C) with h*w = M — the same bytes, offset m*C + c for any such
// split — with CUDNN_BATCHNORM_SPATIAL, which normalises each channel over N*H*W = M
// positions. N = 1 and h, w <= 65535 where M allows keep clear of the dimension limits some
// cuDNN batch-norm kernels have had. Should cuDNN not support a call on that view, it is
// repeated on NCHW (M, C, 1, 1), the other layout with the same bytes (run_batchnorm). The
// per-channel tensors (gamma, beta, mean, var) are (1, C, 1, 1). gamma or beta may be undefined
// (Keras scale=False / center=False): ones and zeros stand in for them.
//
// cuDNN's variance. The interface returns the batch mean and the *biased* variance (divided by
// M), like the CPU backend, while cuDNN's training call produces
//  * resultRunningMean/Variance: running averages, with runningVar updated from the
//    *unbiased* batch variance (divided by M−1), and
//  * resultSaveMean/InvVariance: the batch mean and 1/sqrt(var + eps).
// Recovering var from the saved 1/sqrt(var + eps) loses precision when var is small against
// eps (1/inv² − eps cancels). Instead the running buffers are our outputs, zeroed first, with
// exponentialAverageFactor = 1: runningMean = 0·0 + 1·mean is the batch mean exactly and
// runningVar = var·M/(M−1), which one cublasSscal by (M−1)/M turns into the biased variance
// (within float rounding). M = 1 (no unbiased variance) is handled directly: mean = x,
// var = 0, y = beta.
//
// cuDNN's backward with given statistics (batch or synchronised) takes the mean and
// 1/sqrt(var + eps) as savedMean/savedInvVariance and uses them as given. The inverse standard
// deviation is computed on the GPU by cuDNN's inference batch norm on a one-row input of ones
// with mean 0, scale 1, shift 0 and our variance: y = 1·(1 − 0)/sqrt(var + eps) + 0.
#include <fmt/format.h>

#include "backend/cuda/checks.hpp"
#include "backend/cuda/cuda_backend.hpp"
#include "backend/cuda/device_runtime.hpp"
#include "backend/cuda/dnn_state.hpp"
#include "backend/cuda/kernel_state.hpp"
#include "backend/op_shapes.hpp"
#include "check.hpp"

namespace kerascpp::cuda {

namespace {

constexpr float kOne = 1.f, kZero = 0.f, kMinusOne = -1.f;

// Channels of x viewed as [M, C] (shared with the CPU backend); per-channel tensors are
// checked for the GPU and float32 here, for their shape there.
using op_shapes::channels_of;

void require_channel_vector(const Tensor& t, std::int64_t channels, const Tensor& x, Device dev, const char* op,
                            const char* arg) {
  require_float_on(t, dev, op, arg);
  op_shapes::check_channel_vector(t, channels, x, op, arg);
}

// cuDNN's view of x (and y, dy, dx): NHWC (1, M / w, w, C) with w the largest divisor of M not
// above 65535 (cached per M).
cudnnTensorDescriptor_t nhwc_view(DnnState& d, std::int64_t M, std::int64_t C, const char* op) {
  constexpr std::int64_t kMaxDim = 65535;
  auto it = d.bn_widths.find(M);
  if (it == d.bn_widths.end()) {
    std::int64_t w = M <= kMaxDim ? M : kMaxDim;
    while (w > 1 && M % w != 0) --w;
    it = d.bn_widths.emplace(M, w).first;
  }
  return d.tensor_nhwc(1, M / it->second, it->second, C, op);
}

// Runs one cuDNN batch-norm call `call(x_desc)` on the NHWC view. Should cuDNN answer "not
// supported" for it, the call is repeated on the other view of the same bytes, NCHW
// (M, C, 1, 1) (N*H*W = M positions per channel as well), and the backend keeps to that view.
template <class Call>
void run_batchnorm(DnnState& d, std::int64_t M, std::int64_t C, const char* op, const char* call_name, Call&& call) {
  if (!d.bn_nchw_view) {
    const cudnnStatus_t st = call(nhwc_view(d, M, C, op));
    if (st == CUDNN_STATUS_SUCCESS) return;
    if (CUDNN_STATUS_CATEGORY(st) != CUDNN_STATUS_NOT_SUPPORTED)
      throw_failure("cuDNN", call_name, cudnnGetErrorString(st), __FILE__, __LINE__);
    d.bn_nchw_view = true;
  }
  const cudnnStatus_t st = call(d.tensor_nchw(M, C, 1, 1, op));
  if (st != CUDNN_STATUS_SUCCESS) throw_failure("cuDNN", call_name, cudnnGetErrorString(st), __FILE__, __LINE__);
}
cudnnTensorDescriptor_t channel_desc(DnnState& d, std::int64_t C, const char* op) {
  return d.tensor_nchw(1, C, 1, 1, op);
}

// inv[c] = 1/sqrt(var[c] + eps), by cuDNN's inference batch norm (see the file comment).
void inverse_std(DnnState& d, const float* var, float eps, float* inv, std::int64_t C, const char* op) {
  cudnnTensorDescriptor_t v = channel_desc(d, C, op);
  const float* ones = d.ones(C);
  const float* zeros = d.zeros(C);
  KCPP_CUDNN_CHECK(cudnnBatchNormalizationForwardInference(d.dnn, CUDNN_BATCHNORM_SPATIAL, &kOne, &kZero, v, ones, v,
                                                           inv, v, ones, zeros, zeros, var, static_cast<double>(eps)));
}

}  // namespace

// y = γ·(x − mean)/sqrt(var + eps) + β by kerascpp's elementwise kernel (y may alias x); the
// arguments are checked by the caller.
void CudaBackend::normalize(const Tensor& x, const Tensor& gamma, const Tensor& beta, const Tensor& mean,
                            const Tensor& var, float eps, Tensor& y) {
  const std::int64_t C = x.dim(-1), M = C == 0 ? 0 : x.numel() / C;
  auto* coef = static_cast<float*>(kernels_->scratch(static_cast<std::size_t>(2 * C) * sizeof(float)));
  kern::batchnorm_forward_apply(x.data<float>(), gamma.defined() ? gamma.data<float>() : nullptr,
                                beta.defined() ? beta.data<float>() : nullptr, mean.data<float>(), var.data<float>(),
                                eps, M, C, coef, y.data<float>(), stream_);
  KCPP_CUDA_CHECK(cudaGetLastError());
}

void CudaBackend::batchnorm_forward_training(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps,
                                             Tensor& y, Tensor& mean, Tensor& var) {
  DeviceGuard guard(device_);
  const char* op = "batchnorm_forward_training";
  const Device dev = device();
  require_float_on(x, dev, op, "x");
  const std::int64_t C = channels_of(x, op), M = C == 0 ? 0 : x.numel() / C;
  if (gamma.defined()) require_channel_vector(gamma, C, x, dev, op, "gamma");
  if (beta.defined()) require_channel_vector(beta, C, x, dev, op, "beta");
  prepare_output_on(y, x.shape(), dev, op, "y");
  prepare_output_on(mean, {C}, dev, op, "mean");
  prepare_output_on(var, {C}, dev, op, "var");
  if (C == 0) return;
  KERASCPP_CHECK_SHAPE(M != 0, "{}: x {} holds no rows; batch statistics need at least one", op, shape_str(x.shape()));
  DnnState& d = *dnn_;
  if (!d.bn_cudnn) {
    moments(x, mean, var);  // batchnorm.cpp; then y = γ·inv·(x − mean) + β
    normalize(x, gamma, beta, mean, var, eps, y);
    return;
  }
  check_cudnn_elements(M * C, op, "x");
  const float* px = x.data<float>();
  float* py = y.data<float>();
  float* pmean = mean.data<float>();
  float* pvar = var.data<float>();
  if (M == 1) {
    // One row: mean = x, var = 0, and y = gamma·0/sqrt(eps) + beta = beta. (mean before y: y may alias x.)
    d.copy(px, pmean, C);
    d.zero(pvar, C);
    if (beta.defined()) d.copy(beta.data<float>(), py, C);
    else d.zero(py, C);
    return;
  }
  nhwc_view(d, M, C, op);  // checks the sizes before any work is queued
  cudnnTensorDescriptor_t cd = channel_desc(d, C, op);
  const float* pg = gamma.defined() ? gamma.data<float>() : d.ones(C);
  const float* pb = beta.defined() ? beta.data<float>() : d.zeros(C);
  // cuDNN reads x for the statistics and again to normalise: an output aliasing x goes through scratch.
  float* out = py == px ? d.scratch(M * C) : py;
  // The running buffers start at zero so that 0·(old) cannot turn uninitialised NaNs into NaN.
  d.zero(pmean, C);
  d.zero(pvar, C);
  run_batchnorm(d, M, C, op, "cudnnBatchNormalizationForwardTraining", [&](cudnnTensorDescriptor_t xd) {
    return cudnnBatchNormalizationForwardTraining(d.dnn, CUDNN_BATCHNORM_SPATIAL, &kOne, &kZero, xd, px, xd, out, cd,
                                                  pg, pb, 1.0, pmean, pvar, static_cast<double>(eps), nullptr, nullptr);
  });
  if (out != py) d.copy(out, py, M * C);
  // Unbiased (÷(M−1)) to biased (÷M) variance.
  const float unbias = static_cast<float>(static_cast<double>(M - 1) / static_cast<double>(M));
  KCPP_CUBLAS_CHECK(cublasSscal_64(d.blas, C, &unbias, pvar, 1));
}

void CudaBackend::batchnorm_forward_inference(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                              const Tensor& mean, const Tensor& var, float eps, Tensor& y) {
  DeviceGuard guard(device_);
  const char* op = "batchnorm_forward_inference";
  const Device dev = device();
  require_float_on(x, dev, op, "x");
  const std::int64_t C = channels_of(x, op), M = C == 0 ? 0 : x.numel() / C;
  if (gamma.defined()) require_channel_vector(gamma, C, x, dev, op, "gamma");
  if (beta.defined()) require_channel_vector(beta, C, x, dev, op, "beta");
  require_channel_vector(mean, C, x, dev, op, "mean");
  require_channel_vector(var, C, x, dev, op, "var");
  prepare_output_on(y, x.shape(), dev, op, "y");
  if (M == 0 || C == 0) return;
  DnnState& d = *dnn_;
  if (!d.bn_cudnn) {
    normalize(x, gamma, beta, mean, var, eps, y);
    return;
  }
  check_cudnn_elements(M * C, op, "x");
  nhwc_view(d, M, C, op);  // checks the sizes before any work is queued
  cudnnTensorDescriptor_t cd = channel_desc(d, C, op);
  const float* px = x.data<float>();
  float* py = y.data<float>();
  const float* pg = gamma.defined() ? gamma.data<float>() : d.ones(C);
  const float* pb = beta.defined() ? beta.data<float>() : d.zeros(C);
  const float* pmean = mean.data<float>();
  const float* pvar = var.data<float>();
  // y = gamma·(x − mean)/sqrt(var + eps) + beta with the given statistics (no unbiasing here).
  float* out = py == px ? d.scratch(M * C) : py;
  run_batchnorm(d, M, C, op, "cudnnBatchNormalizationForwardInference", [&](cudnnTensorDescriptor_t xd) {
    return cudnnBatchNormalizationForwardInference(d.dnn, CUDNN_BATCHNORM_SPATIAL, &kOne, &kZero, xd, px, xd, out, cd,
                                                   pg, pb, pmean, pvar, static_cast<double>(eps));
  });
  if (out != py) d.copy(out, py, M * C);
}

void CudaBackend::batchnorm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& mean,
                                     const Tensor& var, float eps, Tensor& dx, Tensor& dgamma, Tensor& dbeta) {
  DeviceGuard guard(device_);
  const char* op = "batchnorm_backward";
  const Device dev = device();
  require_float_on(dy, dev, op, "dy");
  require_float_on(x, dev, op, "x");
  op_shapes::require_same_shape(dy, "dy", x, "x", op);
  const std::int64_t C = channels_of(x, op), M = C == 0 ? 0 : x.numel() / C;
  if (gamma.defined()) require_channel_vector(gamma, C, x, dev, op, "gamma");
  require_channel_vector(mean, C, x, dev, op, "mean");
  require_channel_vector(var, C, x, dev, op, "var");
  prepare_output_on(dx, x.shape(), dev, op, "dx");
  // Undefined dgamma/dbeta mean the layer has no such parameter: cuDNN's values go to scratch.
  if (dgamma.defined()) prepare_output_on(dgamma, {C}, dev, op, "dgamma");
  if (dbeta.defined()) prepare_output_on(dbeta, {C}, dev, op, "dbeta");
  if (C == 0) return;
  DnnState& d = *dnn_;
  if (M == 0) {
    if (dgamma.defined()) d.zero(dgamma.data<float>(), C);
    if (dbeta.defined()) d.zero(dbeta.data<float>(), C);
    return;
  }
  if (!d.bn_cudnn) {
    // The synchronized path's two halves with this replica's sums alone (elementwise apply, so
    // dx may alias dy or x).
    Tensor sums;
    batchnorm_backward_reduce(dy, x, mean, var, eps, sums, dgamma, dbeta);
    batchnorm_backward_apply(dy, x, gamma, mean, var, eps, sums, dx);
    return;
  }
  check_cudnn_elements(M * C, op, "x");
  nhwc_view(d, M, C, op);  // checks the sizes before any work is queued
  cudnnTensorDescriptor_t cd = channel_desc(d, C, op);

  // Per-channel scratch: [inv | dgamma sink | dbeta sink | t1 | t2 | t3], C floats each.
  float* small = d.small(6 * C);
  float* inv = small;
  float* pdgamma = dgamma.defined() ? dgamma.data<float>() : small + C;
  float* pdbeta = dbeta.defined() ? dbeta.data<float>() : small + 2 * C;
  const float* pg = gamma.defined() ? gamma.data<float>() : d.ones(C);
  const float* px = x.data<float>();
  const float* pdy = dy.data<float>();
  const float* pmean = mean.data<float>();
  float* pdx = dx.data<float>();
  inverse_std(d, var.data<float>(), eps, inv, C, op);

  if (M == 1) {
    // One row: Σ over rows is the row itself, so dx = γ·inv·(dy − dy − x̂·(dy·x̂)) = −γ·inv·x̂²·dy,
    // dgamma = dy·x̂, dbeta = dy, with x̂ = (x − mean)·inv. Elementwise on C values with
    // cudnnOpTensor (C = op(α1·A, α2·B)); no output aliases its inputs, and dx is written last
    // (it may alias x or dy).
    float* t1 = small + 3 * C;
    float* t2 = small + 4 * C;
    float* t3 = small + 5 * C;
    cudnnOpTensorDescriptor_t add = d.op_tensor(CUDNN_OP_TENSOR_ADD), mul = d.op_tensor(CUDNN_OP_TENSOR_MUL);
    KCPP_CUDNN_CHECK(cudnnOpTensor(d.dnn, add, &kOne, cd, px, &kMinusOne, cd, pmean, &kZero, cd, t1));  // x − mean
    KCPP_CUDNN_CHECK(cudnnOpTensor(d.dnn, mul, &kOne, cd, t1, &kOne, cd, inv, &kZero, cd, t2));         // x̂
    KCPP_CUDNN_CHECK(cudnnOpTensor(d.dnn, mul, &kOne, cd, pdy, &kOne, cd, t2, &kZero, cd, pdgamma));    // dy·x̂
    d.copy(pdy, pdbeta, C);
    KCPP_CUDNN_CHECK(cudnnOpTensor(d.dnn, mul, &kOne, cd, t2, &kOne, cd, pdgamma, &kZero, cd, t1));   // x̂²·dy
    KCPP_CUDNN_CHECK(cudnnOpTensor(d.dnn, mul, &kOne, cd, t1, &kOne, cd, inv, &kZero, cd, t3));       // ·inv
    KCPP_CUDNN_CHECK(cudnnOpTensor(d.dnn, mul, &kMinusOne, cd, t3, &kOne, cd, pg, &kZero, cd, pdx));  // ·(−γ)
    return;
  }

  // cuDNN reduces dy and x before writing dx: a dx aliasing either goes through scratch.
  float* out = (pdx == px || pdx == pdy) ? d.scratch(M * C) : pdx;
  run_batchnorm(d, M, C, op, "cudnnBatchNormalizationBackward", [&](cudnnTensorDescriptor_t xd) {
    return cudnnBatchNormalizationBackward(d.dnn, CUDNN_BATCHNORM_SPATIAL, &kOne, &kZero, &kOne, &kZero, xd, px, xd,
                                           pdy, xd, out, cd, pg, pdgamma, pdbeta, static_cast<double>(eps), pmean, inv);
  });
  if (out != pdx) d.copy(out, pdx, M * C);
}

}  // namespace kerascpp::cuda
