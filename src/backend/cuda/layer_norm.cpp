// CudaBackend's layer normalization, on the kernels of kernels/layer_norm.cu (the same
// arithmetic as the CPU backend's backend/cpu/layer_norm.cpp). Queued on the backend's stream.
#include "backend/cuda/kernel_common.hpp"
#include "check.hpp"

namespace kerascpp::cuda {

using ops::require_rank_at_least;
using ops::require_same_shape;

namespace {

void require_channel_vector(const Tensor& t, std::int64_t channels, const Tensor& x, Device device, const char* op,
                            const char* arg) {
  require_float_on(t, device, op, arg);
  op_shapes::check_channel_vector(t, channels, x, op, arg);
}

void require_row_vector(const Tensor& t, std::int64_t rows, const Tensor& x, Device device, const char* op,
                        const char* arg) {
  require_float_on(t, device, op, arg);
  KERASCPP_CHECK_SHAPE(t.rank() == 1 && t.numel() == rows,
                       "{}: {} has shape {} but x {} has {} rows; pass the ({},) row statistics that "
                       "layer_norm_forward returned for this x",
                       op, arg, shape_str(t.shape()), shape_str(x.shape()), rows, rows);
}

}  // namespace

void CudaBackend::layer_norm_forward(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps, Tensor& y,
                                     Tensor& mean, Tensor& rstd) {
  DeviceGuard guard(device_);
  const char* op = "layer_norm_forward";
  require_float_on(x, device(), op, "x");
  require_rank_at_least(x, 1, op, "x");
  const std::int64_t C = x.dim(-1), M = C == 0 ? 0 : x.numel() / C;
  if (gamma.defined()) require_channel_vector(gamma, C, x, device(), op, "gamma");
  if (beta.defined()) require_channel_vector(beta, C, x, device(), op, "beta");
  KERASCPP_CHECK_VALUE(eps > 0.f, "{}: eps must be > 0, got {}", op, eps);
  prepare_output_on(y, x.shape(), device(), op, "y");
  prepare_output_on(mean, {M}, device(), op, "mean");
  prepare_output_on(rstd, {M}, device(), op, "rstd");
  kern::layer_norm_forward(x.data<float>(), gamma.defined() ? gamma.data<float>() : nullptr,
                           beta.defined() ? beta.data<float>() : nullptr, eps, M, C, y.data<float>(),
                           mean.data<float>(), rstd.data<float>(), stream_);
  KCPP_CUDA_CHECK(cudaGetLastError());
}

void CudaBackend::layer_norm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& mean,
                                      const Tensor& rstd, Tensor& dx, Tensor& dgamma, Tensor& dbeta) {
  DeviceGuard guard(device_);
  const char* op = "layer_norm_backward";
  require_float_on(dy, device(), op, "dy");
  require_float_on(x, device(), op, "x");
  require_same_shape(dy, "dy", x, "x", op);
  require_rank_at_least(x, 1, op, "x");
  const std::int64_t C = x.dim(-1), M = C == 0 ? 0 : x.numel() / C;
  if (gamma.defined()) require_channel_vector(gamma, C, x, device(), op, "gamma");
  require_row_vector(mean, M, x, device(), op, "mean");
  require_row_vector(rstd, M, x, device(), op, "rstd");
  prepare_output_on(dx, x.shape(), device(), op, "dx");
  if (dgamma.defined()) prepare_output_on(dgamma, {C}, device(), op, "dgamma");
  if (dbeta.defined()) prepare_output_on(dbeta, {C}, device(), op, "dbeta");
  kern::layer_norm_backward(dy.data<float>(), x.data<float>(), gamma.defined() ? gamma.data<float>() : nullptr,
                            mean.data<float>(), rstd.data<float>(), M, C, dx.data<float>(),
                            dgamma.defined() ? dgamma.data<float>() : nullptr,
                            dbeta.defined() ? dbeta.data<float>() : nullptr, stream_);
  KCPP_CUDA_CHECK(cudaGetLastError());
}

}  // namespace kerascpp::cuda
