// Pointwise convolutions (1x1 kernel, no padding, not depthwise) as matrix products on cuBLAS
// (KERASCPP_GPU_CONV1X1=cudnn leaves them to cuDNN). Why: cuDNN's float32 convolution kernels
// are NCHW ones, so on kerascpp's NHWC tensors it transposes around them, and for the 1x1
// stride-2 backward data pass it had only a slow algorithm. Measured on an H200 (ResNet-50,
// batch 64, float32; bench/results/h200-2026-11-26, visit 4): 758.3 images/s against 580.0 on
// cuDNN, one step's GPU time 70.2 ms against 88.6 (ncu).
//
// A 1x1 convolution of NHWC x is the product of its [pixels, C] rows with the HWIO kernel,
// which is already the [C, filters] matrix; with strides the product runs over the subsampled
// rows (gathered first), and the data gradient of the skipped pixels is zero. dense_forward and
// matmul bring the bias, the activation and the 16-bit compute dtype with them.
#include "cuda/cuda_backend.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/dnn_state.hpp"
#include "cuda/kernels/kernels.hpp"

namespace kerascpp::cuda {

namespace {

bool unit_stride(const Conv2DGeometry& g) { return g.stride_h == 1 && g.stride_w == 1; }

// x [n, h, w, c] at the pixels the convolution reads: x itself, or its strided rows [n, oh, ow, c].
Tensor read_pixels(const Tensor& x, std::int64_t oh, std::int64_t ow, const Conv2DGeometry& g, cudaStream_t stream) {
  if (unit_stride(g)) return x;
  Tensor out({x.dim(0), oh, ow, x.dim(3)}, DType::float32, x.device());
  kern::subsample_rows(x.data<float>(), x.dim(0), x.dim(1), x.dim(2), x.dim(3), g.stride_h, g.stride_w, oh, ow,
                       out.data<float>(), stream);
  KCPP_CUDA_CHECK(cudaGetLastError());
  return out;
}

}  // namespace

bool CudaBackend::pointwise_gemm(const Conv2DGeometry& g, bool depthwise) const {
  return dnn_->conv1x1_gemm && !depthwise && g.kernel_h == 1 && g.kernel_w == 1 && g.pad_top == 0 &&
         g.pad_bottom == 0 && g.pad_left == 0 && g.pad_right == 0;
}

void CudaBackend::pointwise_forward(const Tensor& x, const Tensor& w, const Tensor& b, const Conv2DGeometry& g,
                                    ActivationKind act, Tensor& y) {
  const Tensor rows = read_pixels(x, y.dim(1), y.dim(2), g, stream_);
  dense_forward(rows, w.reshape({w.dim(2), w.dim(3)}), b, act, y);
}

void CudaBackend::pointwise_backward_data(const Tensor& dy, const Tensor& w, const Conv2DGeometry& g, Tensor& dx) {
  const std::int64_t ic = w.dim(2), oc = w.dim(3);
  const Tensor wm = w.reshape({ic, oc}), dy_rows = dy.reshape({-1, oc});
  if (unit_stride(g)) {
    Tensor dx_rows = dx.reshape({-1, ic});
    matmul(dy_rows, false, wm, true, dx_rows, false);
    return;
  }
  Tensor read_rows;  // the gradient of the pixels the convolution read
  matmul(dy_rows, false, wm, true, read_rows, false);
  kern::scatter_rows(read_rows.data<float>(), dx.dim(0), dx.dim(1), dx.dim(2), ic, g.stride_h, g.stride_w, dy.dim(1),
                     dy.dim(2), dx.data<float>(), stream_);
  KCPP_CUDA_CHECK(cudaGetLastError());
}

void CudaBackend::pointwise_backward_weights(const Tensor& x, const Tensor& dy, const Conv2DGeometry& g, Tensor& dw,
                                             bool accumulate) {
  const std::int64_t ic = x.dim(3), oc = dy.dim(3);
  const Tensor rows = read_pixels(x, dy.dim(1), dy.dim(2), g, stream_);
  Tensor dw_matrix = dw.reshape({ic, oc});
  matmul(rows.reshape({-1, ic}), true, dy.reshape({-1, oc}), false, dw_matrix, accumulate);
}

}  // namespace kerascpp::cuda
