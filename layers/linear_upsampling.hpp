// Keras 3's bilinear UpSampling2D along one axis, through the Backend's upsample_linear ops.
//
// Keras resizes with ops.image.resize(..., "bilinear", antialias=False): half-pixel centres, so
// output o of an axis upsampled `times` times samples input coordinate (o + 0.5) / times - 0.5,
// with triangle weights renormalised where the kernel leaves the image (the numpy backend's
// _compute_weight_mat), which is the same as clamping to the edge pixel. Written o = i * times +
// p, the coordinate is i + d_p with d_p = (p + 0.5) / times - 0.5 in (-0.5, 0.5): phase p of the
// output is (1 - |d_p|) x[i] + |d_p| x[i +- 1] (the neighbour clamped at the edges); the taps are
// src/backend/linear_resize_taps.hpp, shared by the CPU loops and the CUDA kernels.
#pragma once
#include "kerascpp/backend/backend.hpp"
#include "kerascpp/tensor/tensor.hpp"

namespace kerascpp::detail {

// x (N, H, W, C) upsampled `times` times along axis 1 or 2; times 1 returns x.
Tensor linear_upsample_axis(Backend& be, const Tensor& x, int axis, std::int64_t times);
// The gradient with respect to x of linear_upsample_axis, from dy (its output's gradient).
Tensor linear_upsample_axis_backward(Backend& be, const Tensor& dy, int axis, std::int64_t times);

}  // namespace kerascpp::detail
