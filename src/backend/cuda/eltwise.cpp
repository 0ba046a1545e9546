// Activations on cuDNN: relu, sigmoid and tanh with cudnnActivation*, softmax and log_softmax
// over any axis with cudnnSoftmax* (LOG for log_softmax), linear as a copy; every other kind,
// glu and sparsemax on kerascpp's kernels (kernels/activations.cu), which cuDNN has no mode for. Tensors are viewed
// flat as NCHW (rows, cols, 1, 1) with cols the last axis (see dnn_state.hpp); for softmax, CUDNN_SOFTMAX_MODE_INSTANCE
// then normalises each row over its classes.
//
// Backward from the forward output where the activation allows (ActivationFn::gradient_from_output),
// from its input otherwise. cudnnActivationBackward takes x, y and dy, but for
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
#include "backend/softmax_axis_view.hpp"
#include "check.hpp"

namespace kerascpp::cuda {

namespace {

constexpr float kOne = 1.f, kZero = 0.f;

// The [rows, cols] view of a non-empty tensor: cols = the last axis (1 for a scalar).
void flat_view(const Tensor& t, std::int64_t& rows, std::int64_t& cols) {
  cols = t.rank() == 0 ? 1 : t.dim(-1);
  rows = t.numel() / cols;
}

}  // namespace

void CudaBackend::activation_forward(const ActivationFn& act, const Tensor& x, Tensor& y) {
  DeviceGuard guard(device_);
  const char* op = "activation_forward";
  const Device dev = device();
  require_float_on(x, dev, op, "x");
  DnnState& d = *dnn_;
  if (act.along_axis()) {
    const auto v = op_shapes::softmax_axis_view(x, act.axis, op);
    Shape out = x.shape();
    if (act.changes_shape()) {
      KERASCPP_CHECK_SHAPE(v.classes % 2 == 0,
                           "{}: glu splits axis {} in two halves, so its size must be even; got shape {}", op, act.axis,
                           shape_str(x.shape()));
      out[static_cast<std::size_t>(op_shapes::normalize_axis(act.axis, x.rank(), op, x.shape()))] = v.classes / 2;
    }
    prepare_output_on(y, out, dev, op, "y");
    if (x.numel() == 0) return;
    const float* px = x.data<float>();
    float* py = y.data<float>();
    switch (act.kind) {
      case ActivationKind::glu:
        KERASCPP_CHECK_VALUE(px != py, "{}: glu halves its axis, so y cannot alias x", op);
        kern::glu_forward(px, py, v.outer, v.classes, v.inner, d.stream);
        break;
      case ActivationKind::sparsemax:
        kern::sparsemax_forward(px, py, v.outer, v.classes, v.inner, d.stream);
        break;
      default: {  // softmax, log_softmax: cuDNN's channel mode on (outer, classes, inner, 1)
        cudnnTensorDescriptor_t desc = d.tensor_nchw(v.outer, v.classes, v.inner, 1, op);
        float* o = px == py ? d.scratch(x.numel()) : py;
        const cudnnSoftmaxAlgorithm_t algo =
            act.kind == ActivationKind::log_softmax ? CUDNN_SOFTMAX_LOG : CUDNN_SOFTMAX_ACCURATE;
        KCPP_CUDNN_CHECK(
            cudnnSoftmaxForward(d.dnn, algo, CUDNN_SOFTMAX_MODE_CHANNEL, &kOne, desc, px, &kZero, desc, o));
        if (o != py) d.copy(o, py, x.numel());
        return;
      }
    }
    KCPP_CUDA_CHECK(cudaGetLastError());
    return;
  }
  prepare_output_on(y, x.shape(), dev, op, "y");
  const std::int64_t n = x.numel();
  if (n == 0) return;
  std::int64_t rows = 0, cols = 0;
  flat_view(x, rows, cols);
  // x == y is allowed: cuDNN activations and kerascpp's kernels run in place.
  d.activation_forward(act, x.data<float>(), y.data<float>(), rows, cols, op);
}

void CudaBackend::activation_backward(const ActivationFn& act, const Tensor& x, const Tensor& y, const Tensor& dy,
                                      Tensor& dx) {
  DeviceGuard guard(device_);
  const char* op = "activation_backward";
  const Device dev = device();
  const bool from_y = act.gradient_from_output();
  const Tensor& v = from_y ? y : x;  // what the derivative is computed from
  const char* v_name = from_y ? "y" : "x";
  KERASCPP_CHECK_VALUE(v.defined(), "{}: {} computes its gradient from its {}, which is undefined; pass it", op,
                       activation_name(act), from_y ? "output y" : "input x");
  if (act.kind == ActivationKind::softmax) return softmax_axis_backward(y, dy, act.axis, dx);
  require_float_on(v, dev, op, v_name);
  require_float_on(dy, dev, op, "dy");
  DnnState& d = *dnn_;
  if (act.kind == ActivationKind::glu) {
    const auto view = op_shapes::softmax_axis_view(x, act.axis, op);
    Shape out = x.shape();
    out[static_cast<std::size_t>(op_shapes::normalize_axis(act.axis, x.rank(), op, x.shape()))] = view.classes / 2;
    KERASCPP_CHECK_SHAPE(dy.shape() == out, "{}: glu's dy must have shape {} (x {} with axis {} halved), got {}", op,
                         shape_str(out), shape_str(x.shape()), act.axis, shape_str(dy.shape()));
    prepare_output_on(dx, x.shape(), dev, op, "dx");
    if (x.numel() == 0) return;
    KERASCPP_CHECK_VALUE(dx.data<float>() != dy.data<float>(), "{}: glu halves its axis, so dx cannot alias dy", op);
    kern::glu_backward(x.data<float>(), dy.data<float>(), dx.data<float>(), view.outer, view.classes, view.inner,
                       d.stream);
    KCPP_CUDA_CHECK(cudaGetLastError());
    return;
  }
  KERASCPP_CHECK_SHAPE(dy.shape() == v.shape(), "{}: `dy` has shape {} but `{}` has shape {}; they must match", op,
                       shape_str(dy.shape()), v_name, shape_str(v.shape()));
  prepare_output_on(dx, v.shape(), dev, op, "dx");
  const std::int64_t n = v.numel();
  if (n == 0) return;
  const float* pv = v.data<float>();
  const float* pdy = dy.data<float>();
  float* pdx = dx.data<float>();
  if (act == ActivationKind::linear) {
    d.copy(pdy, pdx, n);
    return;
  }
  if (act == ActivationKind::relu) {
    kern::relu_backward(pv, pdy, pdx, n, d.stream);  // y > 0 exactly where x > 0; dx may alias y or dy
    KCPP_CUDA_CHECK(cudaGetLastError());
    return;
  }
  if (act.kind == ActivationKind::sparsemax) {
    const auto view = op_shapes::softmax_axis_view(x, act.axis, op);
    kern::sparsemax_backward(pv, pdy, pdx, view.outer, view.classes, view.inner, d.stream);
    KCPP_CUDA_CHECK(cudaGetLastError());
    return;
  }
  if (act.kind == ActivationKind::log_softmax) {
    // dx = dy - exp(y) * sum(dy) along the axis; cuDNN's LOG algorithm takes it from y.
    const auto view = op_shapes::softmax_axis_view(y, act.axis, op);
    cudnnTensorDescriptor_t desc = d.tensor_nchw(view.outer, view.classes, view.inner, 1, op);
    float* out = (pdx == pv || pdx == pdy) ? d.scratch(n) : pdx;
    KCPP_CUDNN_CHECK(cudnnSoftmaxBackward(d.dnn, CUDNN_SOFTMAX_LOG, CUDNN_SOFTMAX_MODE_CHANNEL, &kOne, desc, pv, desc,
                                          pdy, &kZero, desc, out));
    if (out != pdx) d.copy(out, pdx, n);
    return;
  }
  if (!DnnState::has_cudnn_mode(act)) {
    kern::activation_backward(static_cast<int>(act.kind), act.alpha, act.beta, act.gamma, from_y, pv, pdy, pdx, n,
                              d.stream);
    KCPP_CUDA_CHECK(cudaGetLastError());
    return;
  }
  std::int64_t rows = 0, cols = 0;
  flat_view(v, rows, cols);
  cudnnTensorDescriptor_t desc = d.rows_view(rows, cols, op);
  // cuDNN allows dx == dy (identical descriptors); a dx aliasing only y goes through scratch.
  float* out = (pdx == pv && pdx != pdy) ? d.scratch(n) : pdx;
  // y is passed as x too (sigmoid, tanh): see the file comment.
  KCPP_CUDNN_CHECK(
      cudnnActivationBackward(d.dnn, d.activation_desc(act), &kOne, desc, pv, desc, pdy, desc, pv, &kZero, desc, out));
  if (out != pdx) d.copy(out, pdx, n);
}

}  // namespace kerascpp::cuda
