// 2-D convolution on cuDNN (legacy descriptor API): NHWC activations, our HWIO kernels.
//
// Filter layout. With NHWC tensors cuDNN wants the filter in its NHWC filter format, KRSC
// (= OHWI: filters, kernel rows, kernel columns, input channels). Our kernels are HWIO
// [kh, kw, cin, cout]; read as a row-major [kh*kw*cin, cout] matrix, its transpose
// [cout, kh*kw*cin] is exactly KRSC. So each call transposes the kernel with one cublasSgeam
// into a per-backend buffer (kernel_buffer), and backward-weights transposes cuDNN's KRSC dW
// back into HWIO, the accumulation (beta = 1) riding on that same geam.
//
// Padding. cuDNN's convolution descriptor only has symmetric padding, but TF/Keras "same"
// padding with stride 2 (and even kernels) pads one less row/column on top/left than on
// bottom/right. A larger symmetric padding plus an output crop does not work in general: it
// shifts every window by max(top, bottom) - top rows, which is not a multiple of the stride. So
// when top != bottom or left != right the input is padded explicitly: a zero-filled buffer
// [n, h+top+bottom, w+left+right, c] gets x copied into its interior (one cudaMemcpy3DAsync,
// see DnnState::pad_nhwc), and cuDNN runs with zero padding on it. That is the same
// convolution: the output size and every window are unchanged. Backward data computes the
// gradient of the padded input and crops its interior into dx; backward weights reads the
// padded input. Symmetric padding goes to cuDNN directly.
//
// Algorithm choice: conv_algo.hpp. Bias and activation follow the convolution as separate
// cuDNN calls.
//
// Depthwise convolution (the depthwise_conv2d_* ops) is the same code with C groups: the
// [kh, kw, C, M] kernel, read as row-major [kh*kw, C*M], is an HWIO kernel with one input
// channel per group and C*M filters, so its transpose is the grouped KRSC filter (K = C*M,
// C/groups = 1) with filter c*M + m in group c, Keras' channel order.
//
// Mixed precision (compute_dtype() bfloat16 or float16, as DnnState::gemm_dtype allows: float16
// always, bfloat16 on compute capability 8.0+). Tensors stay float32 in and out, as on the CPU.
// Both operands of the pass (input and KRSC kernel, dy and kernel, input and dy) are rounded
// into 16-bit scratch (DnnState::operand_a/b) and cuDNN runs its "pseudo" 16-bit configuration:
// 16-bit tensor and filter descriptors, float32 convolution compute type (float32
// accumulation), CUDNN_TENSOR_OP_MATH. cuDNN's legacy API wants the output in the input's data
// type, so y / dx / dW come out in 16 bits (operand_out) and are cast back to float32 (TensorFlow's
// mixed_float16 convolutions also produce 16-bit outputs and gradients); bias and activation
// then run in float32 as before. The 16-bit problem has its own algorithm-cache entry (the key's
// dtype); tensor-core algorithms are allowed, and the math type the heuristics paired with
// the chosen algorithm is set on the (16-bit) descriptor before each run. Where cuDNN offers no
// 16-bit algorithm within the workspace limit (or refuses every candidate), the choice is
// cached as "none" and that problem runs the float32 path instead.
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "backend/cuda/checks.hpp"
#include "backend/cuda/conv_algo.hpp"
#include "backend/cuda/conv_algo_key.hpp"
#include "backend/cuda/cuda_backend.hpp"
#include "backend/cuda/device_runtime.hpp"
#include "backend/cuda/dnn_state.hpp"
#include "backend/op_shapes.hpp"
#include "check.hpp"

namespace kerascpp::cuda {

namespace {

constexpr float kOne = 1.f, kZero = 0.f;

// Geometry and shape checks are shared with the CPU backend (backend/op_shapes.*), messages included.
using op_shapes::conv_shape;
using op_shapes::ConvShape;

// The problem handed to cuDNN: the input as it sees it and its symmetric padding.
struct ConvProblem {
  bool explicit_pad = false;  // asymmetric padding: the input is padded into a buffer first
  std::int64_t h = 0, w = 0;  // input height and width as cuDNN sees them
  std::int64_t pad_h = 0, pad_w = 0;
};

ConvProblem conv_problem(const ConvShape& s, const Conv2DGeometry& g) {
  if (g.pad_top == g.pad_bottom && g.pad_left == g.pad_right) return {false, s.ih, s.iw, g.pad_top, g.pad_left};
  return {true, s.ih + g.pad_top + g.pad_bottom, s.iw + g.pad_left + g.pad_right, 0, 0};
}

// Channel groups: the input channels for a depthwise convolution, else 1.
std::int64_t group_count(const ConvShape& s, bool depthwise) { return depthwise ? s.ic : 1; }

// The data type cuDNN sees for a compute dtype (after DnnState::gemm_dtype).
cudnnDataType_t cudnn_data_type(DType t) {
  return t == DType::float16 ? CUDNN_DATA_HALF : t == DType::bfloat16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_FLOAT;
}

// Descriptors of the problem (cached by DnnState), with tensors and filter of `type`. Also
// checks every size against cuDNN's int limits.
ConvDescs conv_descs(DnnState& d, const ConvShape& s, const ConvProblem& p, const Conv2DGeometry& g, bool depthwise,
                     const char* op, DType type = DType::float32) {
  const std::int64_t groups = group_count(s, depthwise);
  const cudnnDataType_t dt = cudnn_data_type(type);
  ConvDescs cd;
  cd.x = d.tensor_nhwc(s.n, p.h, p.w, s.ic, op, dt);
  cd.y = d.tensor_nhwc(s.n, s.oh, s.ow, s.oc, op, dt);
  cd.w = d.filter_krsc(s.oc, g.kernel_h, g.kernel_w, s.ic / groups, op, dt);
  cd.conv = d.convolution(p.pad_h, p.pad_w, g.stride_h, g.stride_w, groups, op, dt);
  return cd;
}

// The key of the problem cuDNN solves: the (explicitly padded) input and symmetric padding.
ConvAlgoKey algo_key(ConvDirection dir, const ConvShape& s, const ConvProblem& p, const Conv2DGeometry& g,
                     bool depthwise, DType type = DType::float32) {
  Conv2DGeometry solved = g;
  solved.pad_top = solved.pad_bottom = p.pad_h;
  solved.pad_left = solved.pad_right = p.pad_w;
  return conv_algo_key(dir, s.n, p.h, p.w, s.ic, s.oc, solved, group_count(s, depthwise), type);
}

// The input as cuDNN reads it: x itself, or x padded into the state's pad buffer.
const float* conv_input(DnnState& d, const float* x, const ConvShape& s, const ConvProblem& p, const Conv2DGeometry& g,
                        const char* op) {
  if (!p.explicit_pad) return x;
  float* xp = d.pad_buffer(s.n * p.h * p.w * s.ic);
  d.pad_nhwc(x, xp, s.n, s.ih, s.iw, s.ic, g.pad_top, g.pad_bottom, g.pad_left, g.pad_right, 0.f, op);
  return xp;
}

// Rows of the kernel viewed as row-major [kh*kw*cin_per_group, cout].
std::int64_t kernel_rows(const ConvShape& s, const Conv2DGeometry& g, bool depthwise) {
  return g.kernel_h * g.kernel_w * (s.ic / group_count(s, depthwise));
}

}  // namespace

void CudaBackend::conv2d_forward(const Tensor& x, const Tensor& w, const Tensor& b, const Conv2DGeometry& g,
                                 const ActivationFn& act, Tensor& y) {
  conv_forward_impl(x, w, b, g, act, y, false);
}

void CudaBackend::depthwise_conv2d_forward(const Tensor& x, const Tensor& w, const Tensor& b, const Conv2DGeometry& g,
                                           const ActivationFn& act, Tensor& y) {
  conv_forward_impl(x, w, b, g, act, y, true);
}

void CudaBackend::conv_forward_impl(const Tensor& x, const Tensor& w, const Tensor& b, const Conv2DGeometry& g,
                                    const ActivationFn& act, Tensor& y, bool depthwise) {
  DeviceGuard guard(device_);
  const char* op = depthwise ? "depthwise_conv2d_forward" : "conv2d_forward";
  const Device dev = device();
  require_float_on(x, dev, op, "x");
  require_float_on(w, dev, op, "w");
  ConvShape s = depthwise ? op_shapes::depthwise_conv_shape(x, w, g, op, "x") : conv_shape(x, w, g, op, "x");
  const bool bias = b.defined();
  if (bias) {
    require_float_on(b, dev, op, "b");
    op_shapes::check_conv_bias(b, w, s, op);
  }
  prepare_output_on(y, {s.n, s.oh, s.ow, s.oc}, dev, op, "y");
  if (y.numel() == 0) return;

  DnnState& d = *dnn_;
  float* py = y.data<float>();
  const std::int64_t rows = s.n * s.oh * s.ow;
  if (x.numel() == 0) {
    // No input elements (no channels, or an all-padding input): y = act(b) (or act(0)).
    d.zero(py, y.numel());
    if (bias) d.add_row_bias(b.data<float>(), py, rows, s.oc, op);
    d.activation_forward(act, py, py, rows, s.oc, op);
    return;
  }
  if (conv_needs_timing(s, g, depthwise, ConvDirection::forward))
    time_conv_engines(s, g, ConvDirection::forward, [&] {
      Tensor out;
      conv_forward_impl(x, w, b, g, act, out, false);
    });
  switch (conv_route(s, g, depthwise, ConvDirection::forward)) {
    case ConvRoute::gemm:
      return gemm_conv_forward(x, w, b, s, g, act, y);
    case ConvRoute::nchw:
      return nchw_conv_forward(x, w, b, s, g, act, y);
    case ConvRoute::cudnn:
      break;
  }

  const ConvProblem p = conv_problem(s, g);
  const DType cdt = d.gemm_dtype(compute_dtype());
  if (cdt != DType::float32) {
    // Mixed precision (see the top of this file): x and the KRSC kernel rounded to 16 bits, a
    // 16-bit y cast back into the float32 y.
    const ConvDescs cd = conv_descs(d, s, p, g, depthwise, op, cdt);
    const ConvAlgoKey key = algo_key(ConvDirection::forward, s, p, g, depthwise, cdt);
    if (!choose_algo(d, key, cd, s, op, {}).none) {
      const std::int64_t x_count = s.n * p.h * p.w * s.ic, w_count = kernel_rows(s, g, depthwise) * s.oc;
      void* x16 = d.operand_a(x_count);
      d.to_16bit(conv_input(d, x.data<float>(), s, p, g, op), x16, cdt, x_count);
      void* w16 = d.operand_b(w_count);
      d.to_16bit(d.krsc_kernel(w.data<float>(), kernel_rows(s, g, depthwise), s.oc), w16, cdt, w_count);
      void* y16 = d.operand_out(y.numel());
      if (run_conv(d, key, cd, s, op, "the 16-bit convolution", [&](const ConvAlgoChoice& algo, void* ws) {
            return cudnnConvolutionForward(d.dnn, &kOne, cd.x, x16, cd.w, w16, cd.conv,
                                           static_cast<cudnnConvolutionFwdAlgo_t>(algo.algo), ws, algo.workspace_bytes,
                                           &kZero, cd.y, y16);
          })) {
        d.from_16bit(y16, cdt, py, y.numel());
        if (bias) d.add_row_bias(b.data<float>(), py, rows, s.oc, op);
        d.activation_forward(act, py, py, rows, s.oc, op);
        return;
      }
    }
    // No 16-bit algorithm for this problem: float32 below.
  }

  // Descriptors and algorithm first: a problem cuDNN cannot take throws before any work is queued.
  const ConvDescs cd = conv_descs(d, s, p, g, depthwise, op);
  const ConvAlgoKey key = algo_key(ConvDirection::forward, s, p, g, depthwise);
  choose_algo(d, key, cd, s, op, {});

  const float* xin = conv_input(d, x.data<float>(), s, p, g, op);
  const float* wt = d.krsc_kernel(w.data<float>(), kernel_rows(s, g, depthwise), s.oc);
  run_conv(d, key, cd, s, op, "the convolution", [&](const ConvAlgoChoice& algo, void* ws) {
    return cudnnConvolutionForward(d.dnn, &kOne, cd.x, xin, cd.w, wt, cd.conv,
                                   static_cast<cudnnConvolutionFwdAlgo_t>(algo.algo), ws, algo.workspace_bytes, &kZero,
                                   cd.y, py);
  });
  // y viewed as row-major [n*oh*ow, filters]: the bias is a row vector, softmax runs over filters.
  if (bias) d.add_row_bias(b.data<float>(), py, rows, s.oc, op);
  d.activation_forward(act, py, py, rows, s.oc, op);
}

void CudaBackend::conv2d_backward_data(const Tensor& dy, const Tensor& w, const Conv2DGeometry& g, Tensor& dx) {
  conv_backward_data_impl(dy, w, g, dx, false);
}

void CudaBackend::depthwise_conv2d_backward_data(const Tensor& dy, const Tensor& w, const Conv2DGeometry& g,
                                                 Tensor& dx) {
  conv_backward_data_impl(dy, w, g, dx, true);
}

void CudaBackend::conv_backward_data_impl(const Tensor& dy, const Tensor& w, const Conv2DGeometry& g, Tensor& dx,
                                          bool depthwise) {
  DeviceGuard guard(device_);
  const char* op = depthwise ? "depthwise_conv2d_backward_data" : "conv2d_backward_data";
  const Device dev = device();
  require_float_on(dy, dev, op, "dy");
  require_float_on(w, dev, op, "w");
  // With strides > 1 several input sizes give the same output size, so dx fixes the input shape.
  KERASCPP_CHECK_STATE(dx.defined(), "{}: dx is undefined; allocate it with the forward input's shape (N, H, W, {})",
                       op, w.rank() == 4 ? w.dim(2) : 0);
  require_float_on(dx, dev, op, "dx");
  ConvShape s = depthwise ? op_shapes::depthwise_conv_shape(dx, w, g, op, "dx") : conv_shape(dx, w, g, op, "dx");
  op_shapes::check_conv_dy(dy, s, op);
  if (dx.numel() == 0) return;
  DnnState& d = *dnn_;
  float* pdx = dx.data<float>();
  if (dy.numel() == 0) {
    d.zero(pdx, dx.numel());
    return;
  }
  if (conv_needs_timing(s, g, depthwise, ConvDirection::backward_data))
    time_conv_engines(s, g, ConvDirection::backward_data, [&] {
      Tensor out(dx.shape(), DType::float32, dev);
      conv_backward_data_impl(dy, w, g, out, false);
    });
  switch (conv_route(s, g, depthwise, ConvDirection::backward_data)) {
    case ConvRoute::gemm:
      return gemm_conv_backward_data(dy, w, s, g, dx);
    case ConvRoute::nchw:
      return nchw_conv_backward_data(dy, w, s, g, dx);
    case ConvRoute::cudnn:
      break;
  }

  const ConvProblem p = conv_problem(s, g);
  const DType cdt = d.gemm_dtype(compute_dtype());
  if (cdt != DType::float32) {
    // Mixed precision: dy and the KRSC kernel rounded to 16 bits; cuDNN's 16-bit gradient of the
    // (padded) input is cast back to float32, into dx or the pad-gradient buffer to crop from.
    const ConvDescs cd = conv_descs(d, s, p, g, depthwise, op, cdt);
    const ConvAlgoKey key = algo_key(ConvDirection::backward_data, s, p, g, depthwise, cdt);
    if (!choose_algo(d, key, cd, s, op, {}).none) {
      const std::int64_t w_count = kernel_rows(s, g, depthwise) * s.oc, dx_count = s.n * p.h * p.w * s.ic;
      void* dy16 = d.operand_a(dy.numel());
      d.to_16bit(dy.data<float>(), dy16, cdt, dy.numel());
      void* w16 = d.operand_b(w_count);
      d.to_16bit(d.krsc_kernel(w.data<float>(), kernel_rows(s, g, depthwise), s.oc), w16, cdt, w_count);
      void* dx16 = d.operand_out(dx_count);
      if (run_conv(d, key, cd, s, op, "the 16-bit convolution's backward data pass",
                   [&](const ConvAlgoChoice& algo, void* ws) {
                     return cudnnConvolutionBackwardData(d.dnn, &kOne, cd.w, w16, cd.y, dy16, cd.conv,
                                                         static_cast<cudnnConvolutionBwdDataAlgo_t>(algo.algo), ws,
                                                         algo.workspace_bytes, &kZero, cd.x, dx16);
                   })) {
        float* out = p.explicit_pad ? d.pad_grad_buffer(dx_count) : pdx;
        d.from_16bit(dx16, cdt, out, dx_count);
        if (p.explicit_pad)
          d.crop_nhwc(out, pdx, s.n, s.ih, s.iw, s.ic, g.pad_top, g.pad_bottom, g.pad_left, g.pad_right);
        return;
      }
    }
    // No 16-bit algorithm for this problem: float32 below.
  }

  const ConvDescs cd = conv_descs(d, s, p, g, depthwise, op);
  const ConvAlgoKey key = algo_key(ConvDirection::backward_data, s, p, g, depthwise);
  choose_algo(d, key, cd, s, op, {});

  const float* wt = d.krsc_kernel(w.data<float>(), kernel_rows(s, g, depthwise), s.oc);
  const float* pdy = dy.data<float>();
  // With explicit padding cuDNN produces the gradient of the padded input; its interior is dx.
  float* out = p.explicit_pad ? d.pad_grad_buffer(s.n * p.h * p.w * s.ic) : pdx;
  run_conv(d, key, cd, s, op, "the convolution's backward data pass", [&](const ConvAlgoChoice& algo, void* ws) {
    return cudnnConvolutionBackwardData(d.dnn, &kOne, cd.w, wt, cd.y, pdy, cd.conv,
                                        static_cast<cudnnConvolutionBwdDataAlgo_t>(algo.algo), ws, algo.workspace_bytes,
                                        &kZero, cd.x, out);
  });
  if (p.explicit_pad) d.crop_nhwc(out, pdx, s.n, s.ih, s.iw, s.ic, g.pad_top, g.pad_bottom, g.pad_left, g.pad_right);
}

void CudaBackend::conv2d_backward_weights(const Tensor& x, const Tensor& dy, const Conv2DGeometry& g, Tensor& dw,
                                          Tensor& db, bool accumulate) {
  conv_backward_weights_impl(x, dy, g, dw, db, accumulate, false);
}

void CudaBackend::depthwise_conv2d_backward_weights(const Tensor& x, const Tensor& dy, const Conv2DGeometry& g,
                                                    Tensor& dw, Tensor& db, bool accumulate) {
  conv_backward_weights_impl(x, dy, g, dw, db, accumulate, true);
}

void CudaBackend::conv_backward_weights_impl(const Tensor& x, const Tensor& dy, const Conv2DGeometry& g, Tensor& dw,
                                             Tensor& db, bool accumulate, bool depthwise) {
  DeviceGuard guard(device_);
  const char* op = depthwise ? "depthwise_conv2d_backward_weights" : "conv2d_backward_weights";
  const Device dev = device();
  require_float_on(x, dev, op, "x");
  require_float_on(dy, dev, op, "dy");
  op_shapes::check_conv_weights_args(x, dy, g, op);
  const Shape dw_shape =
      depthwise ? op_shapes::depthwise_kernel_shape(x, dy, g, op) : Shape{g.kernel_h, g.kernel_w, x.dim(3), dy.dim(3)};
  // An undefined dw is allocated; it then counts as zeros, so accumulating into it overwrites.
  bool fresh_dw = false;
  if (!dw.defined()) {
    dw = Tensor(dw_shape, DType::float32, dev);
    fresh_dw = true;
  }
  prepare_output_on(dw, dw_shape, dev, op, "dw");
  ConvShape s = depthwise ? op_shapes::depthwise_conv_shape(x, dw, g, op, "x") : conv_shape(x, dw, g, op, "x");
  op_shapes::check_conv_dy(dy, s, op);
  // An undefined db means no bias: it stays undefined.
  const bool bias = db.defined();
  if (bias) prepare_output_on(db, {s.oc}, dev, op, "db");
  if (dw.numel() == 0) return;
  DnnState& d = *dnn_;
  float* pdw = dw.data<float>();
  float* pdb = bias ? db.data<float>() : nullptr;
  const bool add_dw = accumulate && !fresh_dw;
  if (x.numel() == 0 || dy.numel() == 0) {
    if (!add_dw) d.zero(pdw, dw.numel());
    if (bias && !accumulate) d.zero(pdb, s.oc);
    return;
  }

  // Timed before `ones` is taken: the timing's passes use DnnState's shared buffers too.
  if (conv_needs_timing(s, g, depthwise, ConvDirection::backward_filter))
    time_conv_engines(s, g, ConvDirection::backward_filter, [&] {
      Tensor dw_out, db_out = bias ? Tensor({s.oc}, DType::float32, dev) : Tensor();
      conv_backward_weights_impl(x, dy, g, dw_out, db_out, false, false);
    });

  const ConvProblem p = conv_problem(s, g);
  const std::int64_t r = kernel_rows(s, g, depthwise), rows = s.n * s.oh * s.ow;
  const float* ones = bias ? d.ones(rows) : nullptr;
  // db[oc] (+)= Σ over the n*oh*ow rows of dy, in float32 whatever the compute dtype: dy read
  // column-major is an oc x rows matrix (ld oc), and gemv with a vector of ones sums its
  // columns. beta = 0 does not read db.
  auto bias_grad = [&] {
    if (!bias) return;
    const float beta = accumulate ? 1.f : 0.f;
    KCPP_CUBLAS_CHECK(
        cublasSgemv_64(d.blas, CUBLAS_OP_N, s.oc, rows, &kOne, dy.data<float>(), s.oc, ones, 1, &beta, pdb, 1));
  };
  switch (conv_route(s, g, depthwise, ConvDirection::backward_filter)) {
    case ConvRoute::gemm:
      gemm_conv_backward_weights(x, dy, s, g, dw, add_dw);
      return bias_grad();
    case ConvRoute::nchw:
      nchw_conv_backward_weights(x, dy, s, g, dw, add_dw);
      return bias_grad();
    case ConvRoute::cudnn:
      break;
  }

  const DType cdt = d.gemm_dtype(compute_dtype());
  if (cdt != DType::float32) {
    // Mixed precision: x (padded) and dy rounded to 16 bits; cuDNN's 16-bit KRSC dW is cast back
    // to float32 into the kernel buffer and transposed into (or added onto) the HWIO dw.
    const ConvDescs cd = conv_descs(d, s, p, g, depthwise, op, cdt);
    const ConvAlgoKey key = algo_key(ConvDirection::backward_filter, s, p, g, depthwise, cdt);
    if (!choose_algo(d, key, cd, s, op, {}).none) {
      const std::int64_t x_count = s.n * p.h * p.w * s.ic;
      void* x16 = d.operand_a(x_count);
      d.to_16bit(conv_input(d, x.data<float>(), s, p, g, op), x16, cdt, x_count);
      void* dy16 = d.operand_b(dy.numel());
      d.to_16bit(dy.data<float>(), dy16, cdt, dy.numel());
      void* dw16 = d.operand_out(s.oc * r);
      if (run_conv(d, key, cd, s, op, "the 16-bit convolution's backward filter pass",
                   [&](const ConvAlgoChoice& algo, void* ws) {
                     return cudnnConvolutionBackwardFilter(d.dnn, &kOne, cd.x, x16, cd.y, dy16, cd.conv,
                                                           static_cast<cudnnConvolutionBwdFilterAlgo_t>(algo.algo), ws,
                                                           algo.workspace_bytes, &kZero, cd.w, dw16);
                   })) {
        float* dwt = d.kernel_buffer(s.oc * r);
        d.from_16bit(dw16, cdt, dwt, s.oc * r);
        d.transpose(dwt, pdw, s.oc, r, add_dw ? 1.f : 0.f);
        bias_grad();
        return;
      }
    }
    // No 16-bit algorithm for this problem: float32 below.
  }

  const ConvDescs cd = conv_descs(d, s, p, g, depthwise, op);
  const ConvAlgoKey key = algo_key(ConvDirection::backward_filter, s, p, g, depthwise);
  choose_algo(d, key, cd, s, op, {});

  const float* xin = conv_input(d, x.data<float>(), s, p, g, op);
  const float* pdy = dy.data<float>();
  // cuDNN writes dW in KRSC (its NHWC filter layout) into the kernel buffer; the transpose back
  // to HWIO ([oc, r] -> [r, oc]) overwrites dw or, with beta = 1, adds into it.
  float* dwt = d.kernel_buffer(s.oc * r);
  run_conv(d, key, cd, s, op, "the convolution's backward filter pass", [&](const ConvAlgoChoice& algo, void* ws) {
    return cudnnConvolutionBackwardFilter(d.dnn, &kOne, cd.x, xin, cd.y, pdy, cd.conv,
                                          static_cast<cudnnConvolutionBwdFilterAlgo_t>(algo.algo), ws,
                                          algo.workspace_bytes, &kZero, cd.w, dwt);
  });
  d.transpose(dwt, pdw, s.oc, r, add_dw ? 1.f : 0.f);
  bias_grad();
}

void CudaBackend::bias_add(Tensor& y, const Tensor& b) {
  DeviceGuard guard(device_);
  const char* op = "bias_add";
  const Device dev = device();
  require_float_on(y, dev, op, "y");
  require_float_on(b, dev, op, "b");
  op_shapes::require_rank_at_least(y, 1, op, "y");
  const std::int64_t c = y.dim(-1);
  KERASCPP_CHECK_SHAPE(op_shapes::has_shape(b, {c}),
                       "bias_add: b has shape {} but y {} has {} channels; b must be ({},)", shape_str(b.shape()),
                       shape_str(y.shape()), c, c);
  if (y.numel() == 0) return;
  dnn_->add_row_bias(b.data<float>(), y.data<float>(), op_shapes::leading(y), c, op);
}

}  // namespace kerascpp::cuda
