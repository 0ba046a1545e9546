// CudaBackend's bilinear upsampling along one axis (UpSampling2D(bilinear)): checks, then the
// kernels of cuda/kernels/resize.cu.
#include "backend/cuda/kernel_common.hpp"
#include "check.hpp"

namespace kerascpp::cuda {

void CudaBackend::upsample_linear(const Tensor& x, int axis, std::int64_t times, Tensor& y) {
  DeviceGuard guard(device_);
  const char* op = "upsample_linear";
  KERASCPP_CHECK_DEVICE(x.device() == device(), "{}: x must be on {}", op, device().str());
  if (!y.defined()) {
    Shape s = x.shape();
    if (axis >= 0 && axis < x.rank()) s[static_cast<std::size_t>(axis)] *= times;
    y = Tensor(s, DType::float32, device());
  }
  KERASCPP_CHECK_DEVICE(y.device() == device(), "{}: y must be on {}", op, device().str());
  const auto d = op_shapes::linear_resize_dims(x, y, axis, times, op);
  kern::upsample_linear(x.data<float>(), y.data<float>(), d.outer, d.n, d.inner, times, stream_);
  KCPP_CUDA_CHECK(cudaGetLastError());
}

void CudaBackend::upsample_linear_backward(const Tensor& dy, int axis, std::int64_t times, Tensor& dx) {
  DeviceGuard guard(device_);
  const char* op = "upsample_linear_backward";
  KERASCPP_CHECK_DEVICE(dy.device() == device(), "{}: dy must be on {}", op, device().str());
  if (!dx.defined()) {
    Shape s = dy.shape();
    if (axis >= 0 && axis < dy.rank() && times >= 1) s[static_cast<std::size_t>(axis)] /= times;
    dx = Tensor(s, DType::float32, device());
  }
  KERASCPP_CHECK_DEVICE(dx.device() == device(), "{}: dx must be on {}", op, device().str());
  const auto d = op_shapes::linear_resize_dims(dx, dy, axis, times, op);
  kern::upsample_linear_backward(dy.data<float>(), dx.data<float>(), d.outer, d.n, d.inner, times, stream_);
  KCPP_CUDA_CHECK(cudaGetLastError());
}

}  // namespace kerascpp::cuda
