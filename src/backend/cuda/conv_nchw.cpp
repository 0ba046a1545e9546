// Convolutions (not depthwise, float32) on cuDNN over NCHW copies of kerascpp's NHWC tensors: one
// of the routes conv_route.cpp chooses between.
//
// Why: cuDNN's float32 algorithms for NHWC data are slower than its NCHW ones on most of
// ResNet-50's 3x3 stride-1 passes, by 2-3x (an H200, bench/cudnn_layout_bench: 128->128 @28
// forward 0.550 vs 0.210 ms, backward data 0.816 vs 0.211, backward filter 1.020 vs 0.285;
// bench/results/gpu-2026-11-26c/visit1-layout.txt). Transposing the two activations of a pass
// costs a read and a write of each, a fraction of that difference, so the timed engine weighs
// this route, transposes included, against the other two.
//
// Each pass: the activations it reads are transposed NHWC -> NCHW into DnnState's nchw_a/nchw_b
// buffers (cudnnTransformTensor), the HWIO kernel into KCRS (the KRSC transpose of conv.cpp,
// then a transform), cuDNN runs on NCHW descriptors, and its output is transposed back: y and
// dx into NHWC, dW from KCRS into KRSC and then HWIO, the accumulation riding on that last
// transpose. Bias and activation follow on the NHWC output as on the NHWC route. Algorithms are
// measured (cudnnFind, key.nchw; conv_algo.hpp): the NCHW problem is where the heuristics'
// first choice matters most, and the peer, PyTorch with cudnn.benchmark, measures too.
//
// Only symmetric padding (cuDNN's descriptor has no other) and float32 compute: the 16-bit
// passes stay on the NHWC route, whose tensor-core kernels are NHWC ones.
#include "backend/cuda/conv_algo.hpp"
#include "backend/cuda/cuda_backend.hpp"
#include "backend/cuda/device_runtime.hpp"
#include "backend/cuda/dnn_state.hpp"
#include "backend/op_shapes.hpp"

namespace kerascpp::cuda {

namespace {

constexpr float kOne = 1.f, kZero = 0.f;

using op_shapes::ConvShape;

// A pass's descriptors: the NHWC tensors kerascpp holds and the NCHW problem cuDNN solves.
struct NchwDescs {
  cudnnTensorDescriptor_t x_nhwc = nullptr, y_nhwc = nullptr;
  ConvDescs nchw;
};

NchwDescs nchw_descs(DnnState& d, const ConvShape& s, const Conv2DGeometry& g, const char* op) {
  NchwDescs l;
  l.x_nhwc = d.tensor_nhwc(s.n, s.ih, s.iw, s.ic, op);
  l.y_nhwc = d.tensor_nhwc(s.n, s.oh, s.ow, s.oc, op);
  l.nchw.x = d.tensor_nchw(s.n, s.ic, s.ih, s.iw, op);
  l.nchw.y = d.tensor_nchw(s.n, s.oc, s.oh, s.ow, op);
  l.nchw.w = d.filter_kcrs(s.oc, s.ic, g.kernel_h, g.kernel_w, op);
  l.nchw.conv = d.convolution(g.pad_top, g.pad_left, g.stride_h, g.stride_w, 1, op);
  return l;
}

ConvAlgoKey nchw_key(ConvDirection dir, const ConvShape& s, const Conv2DGeometry& g) {
  ConvAlgoKey key = conv_algo_key(dir, s.n, s.ih, s.iw, s.ic, s.oc, g, 1, DType::float32);
  key.nchw = true;
  return key;
}

// The kernel's two filter layouts as 4-D tensors, for the transforms between them: KRSC (K
// images of R x S x C, NHWC) and KCRS (NCHW).
cudnnTensorDescriptor_t krsc_view(DnnState& d, const ConvShape& s, const Conv2DGeometry& g, const char* op) {
  return d.tensor_nhwc(s.oc, g.kernel_h, g.kernel_w, s.ic, op);
}
cudnnTensorDescriptor_t kcrs_view(DnnState& d, const ConvShape& s, const Conv2DGeometry& g, const char* op) {
  return d.tensor_nchw(s.oc, s.ic, g.kernel_h, g.kernel_w, op);
}

// The HWIO kernel w in KCRS: DnnState's KRSC transpose, then KRSC -> KCRS.
const float* kcrs_kernel(DnnState& d, const Tensor& w, const ConvShape& s, const Conv2DGeometry& g, const char* op) {
  const std::int64_t r = g.kernel_h * g.kernel_w * s.ic;
  const float* krsc = d.krsc_kernel(w.data<float>(), r, s.oc);
  float* kcrs = d.kernel_kcrs(r * s.oc);
  d.transform(krsc_view(d, s, g, op), krsc, kcrs_view(d, s, g, op), kcrs);
  return kcrs;
}

}  // namespace

bool CudaBackend::nchw_conv_fits(const ConvShape& s, const Conv2DGeometry& g) const {
  return g.pad_top == g.pad_bottom && g.pad_left == g.pad_right && dnn_->gemm_dtype(compute_dtype()) == DType::float32;
}

void CudaBackend::nchw_conv_forward(const Tensor& x, const Tensor& w, const Tensor& b, const ConvShape& s,
                                    const Conv2DGeometry& g, const ActivationFn& act, Tensor& y) {
  const char* op = "conv2d_forward";
  DnnState& d = *dnn_;
  const NchwDescs l = nchw_descs(d, s, g, op);
  const ConvAlgoKey key = nchw_key(ConvDirection::forward, s, g);
  choose_algo(d, key, l.nchw, s, op, {});  // a problem cuDNN cannot take throws before any work is queued

  float* xn = d.nchw_a(x.numel());
  d.transform(l.x_nhwc, x.data<float>(), l.nchw.x, xn);
  const float* wk = kcrs_kernel(d, w, s, g, op);
  float* yn = d.nchw_b(y.numel());
  run_conv(d, key, l.nchw, s, op, "the convolution (NCHW)", [&](const ConvAlgoChoice& algo, void* ws) {
    return cudnnConvolutionForward(d.dnn, &kOne, l.nchw.x, xn, l.nchw.w, wk, l.nchw.conv,
                                   static_cast<cudnnConvolutionFwdAlgo_t>(algo.algo), ws, algo.workspace_bytes, &kZero,
                                   l.nchw.y, yn);
  });
  float* py = y.data<float>();
  d.transform(l.nchw.y, yn, l.y_nhwc, py);
  const std::int64_t rows = s.n * s.oh * s.ow;
  if (b.defined()) d.add_row_bias(b.data<float>(), py, rows, s.oc, op);
  d.activation_forward(act, py, py, rows, s.oc, op);
}

void CudaBackend::nchw_conv_backward_data(const Tensor& dy, const Tensor& w, const ConvShape& s,
                                          const Conv2DGeometry& g, Tensor& dx) {
  const char* op = "conv2d_backward_data";
  DnnState& d = *dnn_;
  const NchwDescs l = nchw_descs(d, s, g, op);
  const ConvAlgoKey key = nchw_key(ConvDirection::backward_data, s, g);
  choose_algo(d, key, l.nchw, s, op, {});

  float* dyn = d.nchw_a(dy.numel());
  d.transform(l.y_nhwc, dy.data<float>(), l.nchw.y, dyn);
  const float* wk = kcrs_kernel(d, w, s, g, op);
  float* dxn = d.nchw_b(dx.numel());
  run_conv(d, key, l.nchw, s, op, "the convolution's backward data pass (NCHW)",
           [&](const ConvAlgoChoice& algo, void* ws) {
             return cudnnConvolutionBackwardData(d.dnn, &kOne, l.nchw.w, wk, l.nchw.y, dyn, l.nchw.conv,
                                                 static_cast<cudnnConvolutionBwdDataAlgo_t>(algo.algo), ws,
                                                 algo.workspace_bytes, &kZero, l.nchw.x, dxn);
           });
  d.transform(l.nchw.x, dxn, l.x_nhwc, dx.data<float>());
}

void CudaBackend::nchw_conv_backward_weights(const Tensor& x, const Tensor& dy, const ConvShape& s,
                                             const Conv2DGeometry& g, Tensor& dw, bool accumulate) {
  const char* op = "conv2d_backward_weights";
  DnnState& d = *dnn_;
  const NchwDescs l = nchw_descs(d, s, g, op);
  const ConvAlgoKey key = nchw_key(ConvDirection::backward_filter, s, g);
  choose_algo(d, key, l.nchw, s, op, {});

  float* xn = d.nchw_a(x.numel());
  d.transform(l.x_nhwc, x.data<float>(), l.nchw.x, xn);
  float* dyn = d.nchw_b(dy.numel());
  d.transform(l.y_nhwc, dy.data<float>(), l.nchw.y, dyn);
  const std::int64_t r = g.kernel_h * g.kernel_w * s.ic;
  float* dw_kcrs = d.kernel_kcrs(r * s.oc);
  run_conv(d, key, l.nchw, s, op, "the convolution's backward filter pass (NCHW)",
           [&](const ConvAlgoChoice& algo, void* ws) {
             return cudnnConvolutionBackwardFilter(d.dnn, &kOne, l.nchw.x, xn, l.nchw.y, dyn, l.nchw.conv,
                                                   static_cast<cudnnConvolutionBwdFilterAlgo_t>(algo.algo), ws,
                                                   algo.workspace_bytes, &kZero, l.nchw.w, dw_kcrs);
           });
  // KCRS -> KRSC ([oc, r] row-major), then the transpose into HWIO that overwrites or adds.
  float* dw_krsc = d.kernel_buffer(r * s.oc);
  d.transform(kcrs_view(d, s, g, op), dw_kcrs, krsc_view(d, s, g, op), dw_krsc);
  d.transpose(dw_krsc, dw.data<float>(), s.oc, r, accumulate ? 1.f : 0.f);
}

}  // namespace kerascpp::cuda
