// Softmax over any one axis (the Softmax layer's `axis`) on cuDNN: x viewed as NCHW
// (outer, classes, inner, 1) (softmax_axis_view.hpp) with CUDNN_SOFTMAX_MODE_CHANNEL, which
// normalises over C for every (n, h, w): the fibres along the axis, without a transpose.
// Outputs that alias an input go through scratch (cuDNN does not document in-place softmax).
#include <fmt/format.h>

#include "backend/cuda/checks.hpp"
#include "backend/cuda/cuda_backend.hpp"
#include "backend/cuda/device_runtime.hpp"
#include "backend/cuda/dnn_state.hpp"
#include "backend/softmax_axis_view.hpp"
#include "check.hpp"

namespace kerascpp::cuda {

namespace {
constexpr float kOne = 1.f, kZero = 0.f;
}  // namespace

void CudaBackend::softmax_axis_forward(const Tensor& x, int axis, Tensor& y) {
  DeviceGuard guard(device_);
  const char* op = "softmax_axis_forward";
  const Device dev = device();
  require_float_on(x, dev, op, "x");
  const auto v = op_shapes::softmax_axis_view(x, axis, op);
  prepare_output_on(y, x.shape(), dev, op, "y");
  const std::int64_t n = x.numel();
  if (n == 0) return;
  DnnState& d = *dnn_;
  cudnnTensorDescriptor_t desc = d.tensor_nchw(v.outer, v.classes, v.inner, 1, op);
  const float* px = x.data<float>();
  float* py = y.data<float>();
  float* out = py == px ? d.scratch(n) : py;
  KCPP_CUDNN_CHECK(cudnnSoftmaxForward(d.dnn, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL, &kOne, desc, px,
                                       &kZero, desc, out));
  if (out != py) d.copy(out, py, n);
}

void CudaBackend::softmax_axis_backward(const Tensor& y, const Tensor& dy, int axis, Tensor& dx) {
  DeviceGuard guard(device_);
  const char* op = "softmax_axis_backward";
  const Device dev = device();
  require_float_on(y, dev, op, "y");
  require_float_on(dy, dev, op, "dy");
  KERASCPP_CHECK_SHAPE(dy.shape() == y.shape(), "{}: `dy` has shape {} but `y` has shape {}; they must match", op,
                       shape_str(dy.shape()), shape_str(y.shape()));
  const auto v = op_shapes::softmax_axis_view(y, axis, op);
  prepare_output_on(dx, y.shape(), dev, op, "dx");
  const std::int64_t n = y.numel();
  if (n == 0) return;
  DnnState& d = *dnn_;
  cudnnTensorDescriptor_t desc = d.tensor_nchw(v.outer, v.classes, v.inner, 1, op);
  const float* py = y.data<float>();
  const float* pdy = dy.data<float>();
  float* pdx = dx.data<float>();
  float* out = (pdx == py || pdx == pdy) ? d.scratch(n) : pdx;
  KCPP_CUDNN_CHECK(cudnnSoftmaxBackward(d.dnn, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL, &kOne, desc, py,
                                        desc, pdy, &kZero, desc, out));
  if (out != pdx) d.copy(out, pdx, n);
}

}  // namespace kerascpp::cuda
