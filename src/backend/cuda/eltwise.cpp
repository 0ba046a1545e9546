// Activations on cuDNN: relu, sigmoid and tanh with cudnnActivation*, softmax over the last
// axis with cudnnSoftmax*, linear as a copy. Tensors are viewed flat as NCHW (rows, cols, 1, 1)
// with cols the last axis (see dnn_state.hpp); for softmax, CUDNN_SOFTMAX_MODE_INSTANCE then
// normalises each row over its classes.
//
// Backward from the forward output only. cudnnActivationBackward takes x, y and dy, but for
// sigmoid and tanh the derivative is a function of y: sigmoid' = y(1 - y), tanh' = 1 - y², and
// cuDNN evaluates them from y (that is why it asks for y). ReLU's gradient is our kernel,
// dy * [y > 0] as TensorFlow computes it: cuDNN's gives 0 where y <= 0 even for a NaN or Inf dy,
// which would hide a NaN gradient (the CPU backend computes the same as the kernel).
#include <fmt/format.h>

#include "backend/cuda/checks.hpp"
#include "backend/cuda/cuda_backend.hpp"
#include "backend/cuda/device_runtime.hpp"
#include "backend/cuda/dnn_state.hpp"
#include "backend/cuda/kernels/kernels.hpp"

namespace kerascpp::cuda {

namespace {

constexpr float kOne = 1.f, kZero = 0.f;

std::int64_t softmax_classes(const Tensor& t, const char* op) {
  if (t.rank() < 1)
    throw ShapeError(fmt::format("{}: softmax needs rank >= 1, got shape {}", op, shape_str(t.shape())));
  return t.dim(-1);
}

// The [rows, cols] view of a non-empty tensor: cols = the last axis (1 for a scalar).
void flat_view(const Tensor& t, std::int64_t& rows, std::int64_t& cols) {
  cols = t.rank() == 0 ? 1 : t.dim(-1);
  rows = t.numel() / cols;
}

}  // namespace

void CudaBackend::activation_forward(ActivationKind act, const Tensor& x, Tensor& y) {
  DeviceGuard guard(device_);
  const char* op = "activation_forward";
  const Device dev = device();
  require_float_on(x, dev, op, "x");
  prepare_output_on(y, x.shape(), dev, op, "y");
  const std::int64_t n = x.numel();
  if (n == 0) return;
  std::int64_t rows = 0, cols = 0;
  if (act == ActivationKind::softmax) {
    cols = softmax_classes(x, op);
    rows = n / cols;
  } else {
    flat_view(x, rows, cols);
  }
  // x == y is allowed: cuDNN activations run in place; softmax goes through scratch.
  dnn_->activation_forward(act, x.data<float>(), y.data<float>(), rows, cols, op);
}

void CudaBackend::activation_backward(ActivationKind act, const Tensor& y, const Tensor& dy, Tensor& dx) {
  DeviceGuard guard(device_);
  const char* op = "activation_backward";
  const Device dev = device();
  require_float_on(y, dev, op, "y");
  require_float_on(dy, dev, op, "dy");
  if (dy.shape() != y.shape())
    throw ShapeError(fmt::format("{}: `dy` has shape {} but `y` has shape {}; they must match", op,
                                 shape_str(dy.shape()), shape_str(y.shape())));
  prepare_output_on(dx, y.shape(), dev, op, "dx");
  const std::int64_t n = y.numel();
  if (n == 0) return;
  DnnState& d = *dnn_;
  const float* py = y.data<float>();
  const float* pdy = dy.data<float>();
  float* pdx = dx.data<float>();
  if (act == ActivationKind::linear) {
    d.copy(pdy, pdx, n);
    return;
  }
  if (act == ActivationKind::relu) {
    kern::relu_backward(py, pdy, pdx, n, d.stream);  // elementwise: dx may alias y or dy
    KCPP_CUDA_CHECK(cudaGetLastError());
    return;
  }
  std::int64_t rows = 0, cols = 0;
  if (act == ActivationKind::softmax) {
    cols = softmax_classes(y, op);
    rows = n / cols;
  } else {
    flat_view(y, rows, cols);
  }
  cudnnTensorDescriptor_t desc = d.rows_view(rows, cols, op);
  if (act == ActivationKind::softmax) {
    // dx = y ⊙ (dy − Σ_row dy ⊙ y). Each row is reduced before it is written, but cuDNN does not
    // document in-place use, so a dx that aliases y or dy goes through scratch.
    float* out = (pdx == py || pdx == pdy) ? d.scratch(n) : pdx;
    KCPP_CUDNN_CHECK(cudnnSoftmaxBackward(d.dnn, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_INSTANCE, &kOne, desc, py,
                                          desc, pdy, &kZero, desc, out));
    if (out != pdx) d.copy(out, pdx, n);
    return;
  }
  // cuDNN allows dx == dy (identical descriptors); a dx aliasing only y goes through scratch.
  float* out = (pdx == py && pdx != pdy) ? d.scratch(n) : pdx;
  // y is passed as x too (sigmoid, tanh): see the file comment.
  KCPP_CUDNN_CHECK(
      cudnnActivationBackward(d.dnn, d.activation_desc(act), &kOne, desc, py, desc, pdy, desc, py, &kZero, desc, out));
  if (out != pdx) d.copy(out, pdx, n);
}

}  // namespace kerascpp::cuda
