// CudaBackend's moments (plain and synchronized), moving-statistics update and the decomposed
// batch-norm backward of synchronized BN, on the kernels of kernels/moments.cu and
// kernels/reduce.cu. Everything is queued on the backend's stream: no host synchronisation.
#include "backend/cuda/kernel_common.hpp"
#include "check.hpp"

namespace kerascpp::cuda {

using ops::require_rank_at_least;
using ops::require_same_shape;

namespace {

void require_vector(const Tensor& t, std::int64_t channels, const Tensor& x, Device device, const char* op,
                    const char* arg) {
  require_float_on(t, device, op, arg);
  op_shapes::check_channel_vector(t, channels, x, op, arg);
}

// Channels of a packed tensor of `num_replicas` slots of (count, mean[C], var[C]).
std::int64_t packed_channels(const Tensor& packed, int num_replicas, Device device, const char* op) {
  require_float_on(packed, device, op, "packed");
  KERASCPP_CHECK_VALUE(num_replicas > 0, "{}: num_replicas is {}; it must be at least 1", op, num_replicas);
  const std::int64_t slot = packed.numel() / num_replicas;
  KERASCPP_CHECK_SHAPE(packed.rank() == 1 && packed.numel() % num_replicas == 0 && slot % 2 == 1,
                       "{}: packed {} is not {} slots of (count, mean[C], var[C]); make it with "
                       "pack_moments (moments_packed_size floats)",
                       op, shape_str(packed.shape()), num_replicas);
  return (slot - 1) / 2;
}

}  // namespace

void CudaBackend::moving_average_update(Tensor& moving, const Tensor& value, float momentum) {
  DeviceGuard guard(device_);
  const char* op = "moving_average_update";
  require_float_on(moving, device(), op, "moving");
  require_float_on(value, device(), op, "value");
  require_same_shape(value, "value", moving, "moving", op);
  kern::moving_average(moving.data<float>(), value.data<float>(), momentum, moving.numel(), stream_);
  KCPP_CUDA_CHECK(cudaGetLastError());
}

void CudaBackend::moments(const Tensor& x, Tensor& mean, Tensor& var) {
  // The CPU backend's algorithm (shifted by the first row, double sums) as column reductions.
  DeviceGuard guard(device_);
  const char* op = "moments";
  require_float_on(x, device(), op, "x");
  const std::int64_t C = op_shapes::channels_of(x, op), M = C == 0 ? 0 : x.numel() / C;
  prepare_output_on(mean, {C}, device(), op, "mean");
  prepare_output_on(var, {C}, device(), op, "var");
  if (C == 0) return;
  KERASCPP_CHECK_SHAPE(M != 0, "{}: x {} holds no rows; batch statistics need at least one", op, shape_str(x.shape()));
  double* partials = kernels_->scratch_doubles(kern::column_sums_scratch(M, C, kern::kColumnShifted));
  kern::column_moments(x.data<float>(), M, C, partials, mean.data<float>(), var.data<float>(), stream_);
  KCPP_CUDA_CHECK(cudaGetLastError());
}

void CudaBackend::pack_moments(const Tensor& mean, const Tensor& var, std::int64_t count, int replica, int num_replicas,
                               Tensor& packed) {
  DeviceGuard guard(device_);
  const char* op = "pack_moments";
  require_float_on(mean, device(), op, "mean");
  require_rank_at_least(mean, 1, op, "mean");
  const std::int64_t C = mean.dim(-1);
  require_vector(mean, C, mean, device(), op, "mean");
  require_vector(var, C, mean, device(), op, "var");
  KERASCPP_CHECK_VALUE(replica >= 0 && replica < num_replicas,
                       "{}: replica {} is not one of the {} replicas (0 to num_replicas − 1)", op, replica,
                       num_replicas);
  KERASCPP_CHECK_VALUE(count >= 0, "{}: count is {}; it is this replica's number of rows, >= 0", op, count);
  prepare_output_on(packed, {moments_packed_size(C, num_replicas)}, device(), op, "packed");
  kern::pack_moments(mean.data<float>(), var.data<float>(), static_cast<float>(count), C, replica, num_replicas,
                     packed.data<float>(), stream_);
  KCPP_CUDA_CHECK(cudaGetLastError());
}

void CudaBackend::synchronized_moments(const Tensor& packed, int num_replicas, Tensor& mean, Tensor& var) {
  DeviceGuard guard(device_);
  const char* op = "synchronized_moments";
  const std::int64_t C = packed_channels(packed, num_replicas, device(), op);
  prepare_output_on(mean, {C}, device(), op, "mean");
  prepare_output_on(var, {C}, device(), op, "var");
  kern::synchronized_moments(packed.data<float>(), C, num_replicas, mean.data<float>(), var.data<float>(), stream_);
  KCPP_CUDA_CHECK(cudaGetLastError());
}

void CudaBackend::average_moments(const Tensor& packed, int num_replicas, Tensor& mean, Tensor& var) {
  DeviceGuard guard(device_);
  const char* op = "average_moments";
  const std::int64_t C = packed_channels(packed, num_replicas, device(), op);
  prepare_output_on(mean, {C}, device(), op, "mean");
  prepare_output_on(var, {C}, device(), op, "var");
  kern::average_moments(packed.data<float>(), C, num_replicas, mean.data<float>(), var.data<float>(), stream_);
  KCPP_CUDA_CHECK(cudaGetLastError());
}

void CudaBackend::batchnorm_backward_reduce(const Tensor& dy, const Tensor& x, const Tensor& mean, const Tensor& var,
                                            float eps, Tensor& sums, Tensor& dgamma, Tensor& dbeta) {
  DeviceGuard guard(device_);
  const char* op = "batchnorm_backward_reduce";
  require_float_on(dy, device(), op, "dy");
  require_float_on(x, device(), op, "x");
  require_same_shape(dy, "dy", x, "x", op);
  require_rank_at_least(x, 1, op, "x");
  const std::int64_t C = x.dim(-1), M = C == 0 ? 0 : x.numel() / C;
  require_vector(mean, C, x, device(), op, "mean");
  require_vector(var, C, x, device(), op, "var");
  prepare_output_on(sums, {batchnorm_grad_sums_size(C)}, device(), op, "sums");
  if (dgamma.defined()) prepare_output_on(dgamma, {C}, device(), op, "dgamma");
  if (dbeta.defined()) prepare_output_on(dbeta, {C}, device(), op, "dbeta");
  float* ps = sums.data<float>();
  if (C > 0) {
    double* scratch = kernels_->scratch_doubles(kern::column_sums_scratch(M, C, kern::kColumnSumDyXmu));
    kern::column_sums(kern::kColumnSumDyXmu, dy.data<float>(), x.data<float>(), mean.data<float>(), M, C, scratch, ps,
                      ps + C, false, stream_);
    KCPP_CUDA_CHECK(cudaGetLastError());
  }
  kern::grad_sums_finish(ps, static_cast<float>(static_cast<double>(M)), var.data<float>(), eps, C,
                         dgamma.defined() ? dgamma.data<float>() : nullptr,
                         dbeta.defined() ? dbeta.data<float>() : nullptr, stream_);
  KCPP_CUDA_CHECK(cudaGetLastError());
}

void CudaBackend::batchnorm_backward_apply(const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& mean,
                                           const Tensor& var, float eps, const Tensor& sums, Tensor& dx) {
  DeviceGuard guard(device_);
  const char* op = "batchnorm_backward_apply";
  require_float_on(dy, device(), op, "dy");
  require_float_on(x, device(), op, "x");
  require_same_shape(dy, "dy", x, "x", op);
  require_rank_at_least(x, 1, op, "x");
  const std::int64_t C = x.dim(-1), M = C == 0 ? 0 : x.numel() / C;
  if (gamma.defined()) require_vector(gamma, C, x, device(), op, "gamma");
  require_vector(mean, C, x, device(), op, "mean");
  require_vector(var, C, x, device(), op, "var");
  require_float_on(sums, device(), op, "sums");
  KERASCPP_CHECK_SHAPE(sums.rank() == 1 && sums.numel() == batchnorm_grad_sums_size(C),
                       "{}: sums {} for x {} must be ({},): Σdy, Σdy·(x − mean) and the row count, as "
                       "batchnorm_backward_reduce makes them",
                       op, shape_str(sums.shape()), shape_str(x.shape()), batchnorm_grad_sums_size(C));
  // The row count lives on the GPU with the sums; it is not read back (a zero count, which the
  // CPU backend refuses, gives non-finite dx here).
  prepare_output_on(dx, x.shape(), device(), op, "dx");
  if (C == 0) return;
  auto* coef = static_cast<float*>(kernels_->scratch(static_cast<std::size_t>(3 * C) * sizeof(float)));
  kern::batchnorm_backward_apply(dy.data<float>(), x.data<float>(), gamma.defined() ? gamma.data<float>() : nullptr,
                                 mean.data<float>(), var.data<float>(), eps, sums.data<float>(), M, C, coef,
                                 dx.data<float>(), stream_);
  KCPP_CUDA_CHECK(cudaGetLastError());
}

}  // namespace kerascpp::cuda
