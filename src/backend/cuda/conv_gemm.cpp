// Convolutions (not depthwise) as matrix products on cuBLAS: one of the routes conv_route.cpp
// chooses between (the 1x1 unpadded ones always, others where KERASCPP_GPU_CONV says or where
// this route ran a pass fastest).
//
// Why: cuDNN's float32 convolution kernels are NCHW ones, so on kerascpp's NHWC tensors it
// transposes around them, and for the 1x1 stride-2 backward data pass it had only a slow
// algorithm. Measured on an H200 (ResNet-50, batch 64, float32; bench/results/h200-2026-11-26,
// visit 4): 1x1 convolutions on cuBLAS gave 758.3 images/s against 580.0 on cuDNN, one step's GPU
// time 70.2 ms against 88.6 (ncu). For the other convolutions the im2col kernel makes this route
// slower on most of ResNet-50's passes (its im2col kernel alone took 17 ms of a step under
// `gemm`, bench/results/h200-2026-11-26b).
//
// A convolution of NHWC x is the product of its patch matrix col [pixels, kh·kw·C]
// (kernels/im2col.cu) with the HWIO kernel, which is already the [kh·kw·C, filters] matrix; a
// 1x1 unit-stride unpadded convolution's patch matrix is x itself. The data gradient is the
// adjoint of im2col (col2im) applied to dy · kernelᵀ, the kernel gradient colᵀ · dy.
// dense_forward and matmul bring the bias, the activation and the 16-bit compute dtype with them.
#include <limits>

#include "backend/cuda/cuda_backend.hpp"
#include "backend/cuda/cuda_check.hpp"
#include "backend/cuda/dnn_state.hpp"
#include "backend/cuda/kernels/kernels.hpp"
#include "backend/op_shapes.hpp"

namespace kerascpp::cuda {

namespace {

bool unpadded(const Conv2DGeometry& g) {
  return g.pad_top == 0 && g.pad_bottom == 0 && g.pad_left == 0 && g.pad_right == 0;
}

// The patch matrix is x itself: a 1x1 kernel, unit strides, no padding.
bool identity_patches(const Conv2DGeometry& g) {
  return g.kernel_h == 1 && g.kernel_w == 1 && g.stride_h == 1 && g.stride_w == 1 && unpadded(g);
}

kern::ConvGeometry kernel_geometry(const op_shapes::ConvShape& s, const Conv2DGeometry& g) {
  return {s.n, s.ih, s.iw, s.ic, s.oh, s.ow, g.kernel_h, g.kernel_w, g.stride_h, g.stride_w, g.pad_top, g.pad_left};
}

std::int64_t patch_width(const op_shapes::ConvShape& s, const Conv2DGeometry& g) {
  return g.kernel_h * g.kernel_w * s.ic;
}

// x's patch matrix as [n, oh, ow, kh·kw·C] (x itself where that is the same).
Tensor patches(const Tensor& x, const op_shapes::ConvShape& s, const Conv2DGeometry& g, cudaStream_t stream) {
  if (identity_patches(g)) return x;
  Tensor col({s.n, s.oh, s.ow, patch_width(s, g)}, DType::float32, x.device());
  kern::im2col(x.data<float>(), kernel_geometry(s, g), col.data<float>(), stream);
  KCPP_CUDA_CHECK(cudaGetLastError());
  return col;
}

}  // namespace

bool CudaBackend::gemm_conv_fits(const op_shapes::ConvShape& s, const Conv2DGeometry& g) const {
  const std::int64_t width = patch_width(s, g);
  return width <= std::numeric_limits<int>::max() &&
         static_cast<std::size_t>(s.n * s.oh * s.ow * width) * sizeof(float) <= dnn_->workspace_limit;
}

void CudaBackend::gemm_conv_forward(const Tensor& x, const Tensor& w, const Tensor& b, const op_shapes::ConvShape& s,
                                    const Conv2DGeometry& g, const ActivationFn& act, Tensor& y) {
  dense_forward(patches(x, s, g, stream_), w.reshape({patch_width(s, g), s.oc}), b, act, y);
}

void CudaBackend::gemm_conv_backward_data(const Tensor& dy, const Tensor& w, const op_shapes::ConvShape& s,
                                          const Conv2DGeometry& g, Tensor& dx) {
  const Tensor kernel = w.reshape({patch_width(s, g), s.oc}), dy_rows = dy.reshape({-1, s.oc});
  if (identity_patches(g)) {
    Tensor dx_rows = dx.reshape({-1, s.ic});
    matmul(dy_rows, false, kernel, true, dx_rows, false);
    return;
  }
  Tensor dcol;  // the gradient of the patch matrix
  matmul(dy_rows, false, kernel, true, dcol, false);
  kern::col2im(dcol.data<float>(), kernel_geometry(s, g), dx.data<float>(), stream_);
  KCPP_CUDA_CHECK(cudaGetLastError());
}

void CudaBackend::gemm_conv_backward_weights(const Tensor& x, const Tensor& dy, const op_shapes::ConvShape& s,
                                             const Conv2DGeometry& g, Tensor& dw, bool accumulate) {
  const std::int64_t width = patch_width(s, g);
  Tensor dw_matrix = dw.reshape({width, s.oc});
  matmul(patches(x, s, g, stream_).reshape({-1, width}), true, dy.reshape({-1, s.oc}), false, dw_matrix, accumulate);
}

}  // namespace kerascpp::cuda
