// 2-D max and average pooling on cuDNN, NHWC.
//
// Modes: max pooling uses CUDNN_POOLING_MAX_DETERMINISTIC; cuDNN's max pooling ignores padded
// positions (they act as -inf), as oneDNN's does. Average pooling uses
// CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING: the divisor counts only input positions, as in
// Keras.
//
// Workspace: cuDNN's max-pooling backward needs the forward input x and output y (it finds
// each window's maximum again by comparing them); the backward call gets x but not y, so the
// forward stores a copy of y in `workspace` (a float32 GPU tensor of y's shape, (re)allocated
// as needed). Average pooling needs nothing and leaves `workspace` alone.
//
// Asymmetric padding (top != bottom or left != right: TF "same" on odd sizes) does not fit
// cuDNN's symmetric pooling descriptor, so, as for convolutions, the input is padded
// explicitly into a buffer and cuDNN pools it with zero padding:
//  * max: the border is filled with -inf, so it never wins a window (every window holds at
//    least one input position, because each padding is smaller than the pool); the backward
//    pass pools the re-padded x and crops the interior of the padded gradient into dx.
//  * average: the border is filled with 0 and cuDNN divides by the full window
//    (COUNT_INCLUDE_PADDING), giving sum / (ph*pw); multiplying output position (i, j) by
//    ph*pw / (number of input positions in its window) gives sum / count, Keras' average. The
//    factors depend only on the geometry: they are computed on the host once, uploaded and
//    cached, and applied with cudnnOpTensor (MUL, broadcast over batch and channels). The
//    backward pass scales dy by the same factors before cuDNN's backward, then crops.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <limits>
#include <memory>

#include "backend/cuda/checks.hpp"
#include "backend/cuda/cuda_backend.hpp"
#include "backend/cuda/device_runtime.hpp"
#include "backend/cuda/dnn_state.hpp"
#include "backend/op_shapes.hpp"
#include "check.hpp"

namespace kerascpp::cuda {

namespace {

constexpr float kOne = 1.f, kZero = 0.f;

// Geometry and shape checks are shared with the CPU backend (backend/op_shapes.*), messages included.
using op_shapes::has_shape;
using op_shapes::pool_shape;
using op_shapes::PoolShape;

// What cuDNN is asked to pool: x itself with symmetric padding, or x padded explicitly.
struct PoolProblem {
  bool explicit_pad = false;
  std::int64_t h = 0, w = 0;  // input height and width as cuDNN sees them
  std::int64_t pad_h = 0, pad_w = 0;
  cudnnPoolingMode_t mode = CUDNN_POOLING_MAX_DETERMINISTIC;
};

PoolProblem pool_problem(const PoolShape& s, const Pool2DGeometry& g) {
  PoolProblem p;
  p.explicit_pad = g.pad_top != g.pad_bottom || g.pad_left != g.pad_right;
  if (p.explicit_pad) {
    p.h = s.ih + g.pad_top + g.pad_bottom;
    p.w = s.iw + g.pad_left + g.pad_right;
  } else {
    p.h = s.ih;
    p.w = s.iw;
    p.pad_h = g.pad_top;
    p.pad_w = g.pad_left;
  }
  if (g.kind == PoolKind::max) p.mode = CUDNN_POOLING_MAX_DETERMINISTIC;
  else
    p.mode = p.explicit_pad ? CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING;
  return p;
}

struct PoolDescs {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnPoolingDescriptor_t pool = nullptr;
};

PoolDescs pool_descs(DnnState& d, const PoolShape& s, const PoolProblem& p, const Pool2DGeometry& g, const char* op) {
  PoolDescs pd;
  pd.x = d.tensor_nhwc(s.n, p.h, p.w, s.c, op);
  pd.y = d.tensor_nhwc(s.n, s.oh, s.ow, s.c, op);
  pd.pool = d.pooling(p.mode, g.pool_h, g.pool_w, p.pad_h, p.pad_w, g.stride_h, g.stride_w, op);
  // cuDNN's output size for these descriptors must be ours (host-side arithmetic, no GPU work).
  int on = 0, oc = 0, oh = 0, ow = 0;
  KCPP_CUDNN_CHECK(cudnnGetPooling2dForwardOutputDim(pd.pool, pd.x, &on, &oc, &oh, &ow));
  KERASCPP_CHECK_DEVICE(!(on != s.n || oc != s.c || oh != s.oh || ow != s.ow),
                        "{}: internal error: cuDNN pools the ({}, {}, {}, {}) input into ({}, {}, {}, {}) but the "
                        "geometry gives ({}, {}, {}, {})",
                        op, s.n, p.h, p.w, s.c, on, oh, ow, oc, s.n, s.oh, s.ow, s.c);
  return pd;
}

// The [oh, ow] factors ph*pw / count(i, j) of asymmetrically padded average pooling (see the
// file comment), cached per geometry and input size.
const float* avg_factors(DnnState& d, const PoolShape& s, const Pool2DGeometry& g) {
  const std::array<std::int64_t, 10> key{s.ih,       s.iw,      g.pool_h,   g.pool_w,     g.stride_h,
                                         g.stride_w, g.pad_top, g.pad_left, g.pad_bottom, g.pad_right};
  auto& slot = d.avg_pool_factors[key];
  if (slot) return static_cast<const float*>(slot->device_factors.get(d.device, 0));
  auto entry = std::make_unique<AvgPoolFactors>();
  const std::int64_t count = s.oh * s.ow;
  const std::size_t bytes = static_cast<std::size_t>(count) * sizeof(float);
  entry->pinned = pinned_allocate(bytes);
  entry->pinned_bytes = bytes;
  float* host = static_cast<float*>(entry->pinned);
  const double window = static_cast<double>(g.pool_h * g.pool_w);
  for (std::int64_t i = 0; i < s.oh; ++i) {
    const std::int64_t r0 = i * g.stride_h - g.pad_top, r1 = r0 + g.pool_h;
    const std::int64_t rows = std::min(r1, s.ih) - std::max<std::int64_t>(r0, 0);
    for (std::int64_t j = 0; j < s.ow; ++j) {
      const std::int64_t c0 = j * g.stride_w - g.pad_left, c1 = c0 + g.pool_w;
      const std::int64_t cols = std::min(c1, s.iw) - std::max<std::int64_t>(c0, 0);
      const std::int64_t valid = std::max<std::int64_t>(rows, 1) * std::max<std::int64_t>(cols, 1);
      host[i * s.ow + j] = static_cast<float>(window / static_cast<double>(valid));
    }
  }
  float* dev = entry->device_factors.floats(d.device, count);
  // The pinned copy lives as long as the cache entry, so the upload is truly asynchronous.
  KCPP_CUDA_CHECK(cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice, d.stream));
  slot = std::move(entry);
  return dev;
}

// out = a ⊙ factors, the [oh, ow] factors broadcast over batch and channels: A and C are the
// NHWC tensors (n, oh, ow, c), B is (1, oh, ow, 1) — also NHWC, so all three share a format; with
// one channel that is the packed [oh, ow] array. out must not alias a.
void scale_by_factors(DnnState& d, const float* a, const float* factors, float* out, const PoolShape& s,
                      cudnnTensorDescriptor_t y_desc, const char* op) {
  KCPP_CUDNN_CHECK(cudnnOpTensor(d.dnn, d.op_tensor(CUDNN_OP_TENSOR_MUL), &kOne, y_desc, a, &kOne,
                                 d.tensor_nhwc(1, s.oh, s.ow, 1, op), factors, &kZero, y_desc, out));
}

// The input as cuDNN reads it: x, or x padded with -inf (max) or 0 (average) into the pad buffer.
const float* pool_input(DnnState& d, const float* x, const PoolShape& s, const PoolProblem& p, const Pool2DGeometry& g,
                        const char* op) {
  if (!p.explicit_pad) return x;
  float* xp = d.pad_buffer(s.n * p.h * p.w * s.c);
  const float fill = g.kind == PoolKind::max ? -std::numeric_limits<float>::infinity() : 0.f;
  d.pad_nhwc(x, xp, s.n, s.ih, s.iw, s.c, g.pad_top, g.pad_bottom, g.pad_left, g.pad_right, fill, op);
  return xp;
}

}  // namespace

void CudaBackend::pool2d_forward(const Tensor& x, const Pool2DGeometry& g, Tensor& y, Tensor& workspace) {
  DeviceGuard guard(device_);
  const char* op = "pool2d_forward";
  const Device dev = device();
  require_float_on(x, dev, op, "x");
  PoolShape s = pool_shape(x, g, op);
  prepare_output_on(y, {s.n, s.oh, s.ow, s.c}, dev, op, "y");
  if (y.numel() == 0) return;

  DnnState& d = *dnn_;
  const PoolProblem p = pool_problem(s, g);
  const PoolDescs pd = pool_descs(d, s, p, g, op);
  const bool max = g.kind == PoolKind::max;
  if (max && (!workspace.defined() || workspace.dtype() != DType::float32 || workspace.device() != dev ||
              workspace.shape() != y.shape()))
    workspace = Tensor(y.shape(), DType::float32, dev);
  const float* factors = !max && p.explicit_pad ? avg_factors(d, s, g) : nullptr;

  float* py = y.data<float>();
  const float* xin = pool_input(d, x.data<float>(), s, p, g, op);
  // With correction factors cuDNN writes to scratch and the scaled result goes to y.
  float* out = factors ? d.scratch(y.numel()) : py;
  KCPP_CUDNN_CHECK(cudnnPoolingForward(d.dnn, pd.pool, &kOne, pd.x, xin, &kZero, pd.y, out));
  if (factors) scale_by_factors(d, out, factors, py, s, pd.y, op);
  if (max) d.copy(py, workspace.data<float>(), y.numel());  // y for the backward pass
}

void CudaBackend::pool2d_backward(const Tensor& dy, const Tensor& x, const Pool2DGeometry& g, const Tensor& workspace,
                                  Tensor& dx) {
  DeviceGuard guard(device_);
  const char* op = "pool2d_backward";
  const Device dev = device();
  require_float_on(dy, dev, op, "dy");
  require_float_on(x, dev, op, "x");
  PoolShape s = pool_shape(x, g, op);
  op_shapes::check_pool_dy(dy, x, s, op);
  prepare_output_on(dx, x.shape(), dev, op, "dx");
  if (dx.numel() == 0) return;
  DnnState& d = *dnn_;
  float* pdx = dx.data<float>();
  if (dy.numel() == 0) {
    d.zero(pdx, dx.numel());
    return;
  }
  const bool max = g.kind == PoolKind::max;
  KERASCPP_CHECK_STATE(
      !(max && (!workspace.defined() || workspace.dtype() != DType::float32 || workspace.device() != dev ||
                !has_shape(workspace, {s.n, s.oh, s.ow, s.c}))),
      "{}: max pooling needs the workspace (the forward output, float32 {} on {}) filled by pool2d_forward on the "
      "same input; got {}",
      op, shape_str({s.n, s.oh, s.ow, s.c}), dev.str(),
      workspace.defined() ? fmt::format("{} {} on {}", dtype_name(workspace.dtype()), shape_str(workspace.shape()),
                                        workspace.device().str())
                          : std::string("an undefined tensor"));

  const PoolProblem p = pool_problem(s, g);
  const PoolDescs pd = pool_descs(d, s, p, g, op);
  const float* factors = !max && p.explicit_pad ? avg_factors(d, s, g) : nullptr;

  const float* pdy = dy.data<float>();
  if (factors) {
    float* scaled = d.scratch(dy.numel());
    scale_by_factors(d, pdy, factors, scaled, s, pd.y, op);
    pdy = scaled;
  }
  // Average pooling's backward does not read y; it gets dy there (a valid tensor of y's shape).
  const float* py = max ? workspace.data<float>() : pdy;
  const float* xin = pool_input(d, x.data<float>(), s, p, g, op);
  float* out = p.explicit_pad ? d.pad_grad_buffer(s.n * p.h * p.w * s.c) : pdx;
  KCPP_CUDNN_CHECK(cudnnPoolingBackward(d.dnn, pd.pool, &kOne, pd.y, py, pd.y, pdy, pd.x, xin, &kZero, pd.x, out));
  if (p.explicit_pad) d.crop_nhwc(out, pdx, s.n, s.ih, s.iw, s.c, g.pad_top, g.pad_bottom, g.pad_left, g.pad_right);
}

}  // namespace kerascpp::cuda
