// 2-D convolution on oneDNN: NHWC activations, HWIO kernels. Kernels are handed to oneDNN in
// the layout it prefers ("any") through a cached reorder, because its fast AVX2/AVX-512
// kernels need blocked weights; the reorder is small next to the convolution itself.
// Depthwise convolution is the same code with C groups (oneDNN's grouped weights).
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "backend/cpu/checks.hpp"
#include "backend/cpu/cpu_backend.hpp"
#include "backend/cpu/dnnl_util.hpp"
#include "backend/cpu/nan_propagation.hpp"
#include "backend/cpu/parallel.hpp"
#include "check.hpp"

namespace kerascpp::cpu {

namespace {

// Geometry and shape checks are shared with the CUDA backend (backend/op_shapes.*).
using op_shapes::conv_shape;
using op_shapes::ConvShape;

struct ConvDescs {
  dnnl::memory::desc src, wei_any, wei_user, bias, dst;
  dims strides, pad_l, pad_r;
};

// The user's kernel as oneDNN weights: HWIO, or for a depthwise convolution (C groups) the
// [kh, kw, C, M] kernel as grouped weights (g = C, o = M, i = 1, h, w) described by strides:
// output channel c·M + m of group c is element (h, w, c, m), as in Keras.
dnnl::memory::desc user_weights_md(const ConvShape& s, const Conv2DGeometry& g, bool depthwise,
                                   dnnl::memory::data_type dt) {
  if (!depthwise) return typed_md({s.oc, s.ic, g.kernel_h, g.kernel_w}, dt, tag::hwio);
  const std::int64_t m = s.oc / s.ic;
  return {{s.ic, m, 1, g.kernel_h, g.kernel_w}, dt, {m, 1, s.oc, g.kernel_w * s.oc, s.oc}};
}

dnnl::memory::desc any_weights_md(const ConvShape& s, const Conv2DGeometry& g, bool depthwise,
                                  dnnl::memory::data_type dt) {
  if (!depthwise) return typed_md({s.oc, s.ic, g.kernel_h, g.kernel_w}, dt, tag::any);
  return typed_md({s.ic, s.oc / s.ic, 1, g.kernel_h, g.kernel_w}, dt, tag::any);
}

// The data types of a convolution's source, weights and destination (or their diffs): float32,
// or the compute dtype for the two operands of the op at hand (mixed precision).
struct ConvTypes {
  dnnl::memory::data_type src, wei, dst;
};
constexpr auto kF32 = dnnl::memory::data_type::f32;

// The rows (output pixels) one thread sums per chunk of a float32 weight gradient: the error
// of the kernel gradient of the issue-49 CNN fell with the chunk, 7.6e-6 at 43,264 rows, 1.3e-6
// at 5,408, 7e-7 at 2,704 (Keras/JAX float32: 8.5e-7), while each chunk is one more primitive
// call. 4096 keeps those calls to about one per 4096 rows.
constexpr std::int64_t kWeightGradRows = 4096;

// oneDNN 2.6.3's 1x1 backward-weights kernel with strides (jit_1x1, which first gathers the
// strided pixels into a scratch buffer) corrupts the heap with two or more threads for 4 to 15
// input channels: x 2x64x64x4 -> 8 channels at stride 2 crashes, and so does the GPU suite's
// 2x192x192x4 case. A strided 1x1 convolution without padding reads only pixels (i·sh, j·sw);
// those pixels, gathered here, are the input of the same convolution at stride 1, which takes
// oneDNN's unstrided path.
bool strided_pointwise(const Conv2DGeometry& g) {
  return g.kernel_h == 1 && g.kernel_w == 1 && (g.stride_h > 1 || g.stride_w > 1) && g.pad_top == 0 &&
         g.pad_left == 0 && g.pad_bottom == 0 && g.pad_right == 0;
}

Tensor strided_pixels(const Tensor& x, const ConvShape& s, const Conv2DGeometry& g) {
  Tensor out({s.n, s.oh, s.ow, s.ic}, x.dtype(), Device{});
  const std::size_t width = dtype_size(x.dtype()), row_bytes = static_cast<std::size_t>(s.ic) * width;
  const char* src = static_cast<const char*>(x.raw());
  char* dst = static_cast<char*>(out.raw());
  // One output pixel (C values) per iteration, blocks of about kElementGrain floats per thread.
  parallel_for(s.n * s.oh * s.ow, std::max<std::int64_t>(1, kElementGrain / s.ic), [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t p = b; p < e; ++p) {
      const std::int64_t j = p % s.ow, i = p / s.ow % s.oh, n = p / (s.ow * s.oh);
      const std::int64_t from = ((n * s.ih + i * g.stride_h) * s.iw + j * g.stride_w) * s.ic;
      std::memcpy(dst + static_cast<std::size_t>(p * s.ic) * width, src + static_cast<std::size_t>(from) * width,
                  row_bytes);
    }
  });
  return out;
}

ConvDescs conv_descs(const ConvShape& s, const Conv2DGeometry& g, bool depthwise, ConvTypes t = {kF32, kF32, kF32}) {
  return {typed_md({s.n, s.ic, s.ih, s.iw}, t.src, tag::nhwc),
          any_weights_md(s, g, depthwise, t.wei),
          user_weights_md(s, g, depthwise, t.wei),
          f32_md({s.oc}, tag::a),
          typed_md({s.n, s.oc, s.oh, s.ow}, t.dst, tag::nhwc),
          {g.stride_h, g.stride_w},
          {g.pad_top, g.pad_left},
          {g.pad_bottom, g.pad_right}};
}

dnnl::convolution_forward::primitive_desc forward_pd(const ConvDescs& d, bool bias, const dnnl::primitive_attr& attr,
                                                     const dnnl::engine& engine) {
  auto desc =
      bias ? dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct,
                                             d.src, d.wei_any, d.bias, d.dst, d.strides, d.pad_l, d.pad_r)
           : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct,
                                             d.src, d.wei_any, d.dst, d.strides, d.pad_l, d.pad_r);
  return {desc, attr, engine};
}

// Which way a WeightsCopy reorders: the user's HWIO kernel into the primitive's layout (forward,
// backward data), or the primitive's diff weights back into the HWIO kernel (backward weights).
enum class Reorder { to_primitive, to_user };

// A kernel in oneDNN's preferred layout: the reorder (when needed) between it and the user's
// HWIO kernel, and the buffer that holds the primitive's side.
struct WeightsCopy {
  bool needed = false;
  CachedPrimitive reorder;
  Tensor buffer;

  // Reorder::to_primitive: the kernel to bind as the primitive's weights, reordering `user` into
  // the buffer first when needed. `run` is the backend's run.
  template <class Run>
  const void* to_primitive(const void* user, Run&& run) {
    if (!needed) return user;
    reorder.bind(DNNL_ARG_FROM, user);
    reorder.bind(DNNL_ARG_TO, buffer.raw());
    run(reorder);
    return buffer.raw();
  }
  // Reorder::to_user: where the primitive writes its diff weights (the buffer when needed) ...
  void* primitive_side(void* user) { return needed ? buffer.raw() : user; }
  // ... and, after it ran, the reorder (with its accumulation, if any) from there into `user`.
  template <class Run>
  void to_user(void* user, Run&& run) {
    if (!needed) return;
    reorder.bind(DNNL_ARG_FROM, buffer.raw());
    reorder.bind(DNNL_ARG_TO, user);
    run(reorder);
  }
};

// The copy between the user's kernel `user_md` (HWIO) and the primitive's `primitive_md`, in
// direction `dir`. It is needed when the layouts differ or, towards the user, to accumulate:
// accumulation rides on the reorder back to HWIO as a sum post-op. `make` builds the reorder
// primitive: the backend's make_primitive with the arguments it is given. `attr` is a oneDNN
// handle that the sum post-op modifies, so pass a fresh one (base_attr()).
template <class Make>
WeightsCopy weights_copy(Reorder dir, const dnnl::memory::desc& user_md, const dnnl::memory::desc& primitive_md,
                         bool accumulate, dnnl::primitive_attr attr, const dnnl::engine& engine, Make&& make) {
  if (!accumulate && primitive_md == user_md) return {};
  if (accumulate) {
    dnnl::post_ops po;
    po.append_sum(1.f);
    attr.set_post_ops(po);
  }
  auto rpd = dir == Reorder::to_primitive ? dnnl::reorder::primitive_desc(engine, user_md, engine, primitive_md, attr)
                                          : dnnl::reorder::primitive_desc(engine, primitive_md, engine, user_md, attr);
  return {true, make(rpd, std::initializer_list<int>{DNNL_ARG_FROM, DNNL_ARG_TO}),
          Tensor({static_cast<std::int64_t>(primitive_md.get_size())}, DType::uint8, Device{})};
}

struct ConvEntry : CacheEntry {
  CachedPrimitive conv;
  WeightsCopy weights;
};

void key_geometry(PrimitiveCache& cache, const ConvShape& s, const Conv2DGeometry& g, bool depthwise) {
  cache.append(s.n, s.ih, s.iw, s.ic, s.oc, g.kernel_h, g.kernel_w, g.stride_h, g.stride_w, g.pad_top, g.pad_left,
               g.pad_bottom, g.pad_right, depthwise);
}

}  // namespace

void CpuBackend::conv2d_forward(const Tensor& x, const Tensor& w, const Tensor& b, const Conv2DGeometry& g,
                                const ActivationFn& act, Tensor& y) {
  conv_forward_impl(x, w, b, g, act, y, false);
}

void CpuBackend::depthwise_conv2d_forward(const Tensor& x, const Tensor& w, const Tensor& b, const Conv2DGeometry& g,
                                          const ActivationFn& act, Tensor& y) {
  conv_forward_impl(x, w, b, g, act, y, true);
}

void CpuBackend::conv_forward_impl(const Tensor& x, const Tensor& w, const Tensor& b, const Conv2DGeometry& g,
                                   const ActivationFn& act, Tensor& y, bool depthwise) {
  enter();
  const char* op = depthwise ? "depthwise_conv2d_forward" : "conv2d_forward";
  require_activation(x, op, "x");
  require_float(w, op, "w");
  ConvShape s = depthwise ? op_shapes::depthwise_conv_shape(x, w, g, op, "x") : conv_shape(x, w, g, op, "x");
  const bool bias = b.defined();
  if (bias) {
    require_float(b, op, "b");
    op_shapes::check_conv_bias(b, w, s, op);
  }
  prepare_activation(y, {s.n, s.oh, s.ow, s.oc}, DType::float32, op, "y");
  if (y.numel() == 0) return;

  const ComputeOperands operands = compute_operands(x, w);
  const auto dst_type = dnnl_type_of(y.dtype());
  cache_.key("conv_fwd");
  key_geometry(cache_, s, g, depthwise);
  cache_.append(bias, post_op_key(act), static_cast<int>(operands.dt), static_cast<int>(dst_type));
  auto& e = cache_.get<ConvEntry>([&] {
    return guarded_build(op, cache_.current_key(), [&] {
      ConvDescs d = conv_descs(s, g, depthwise, {operands.dt, operands.dt, dst_type});
      auto attr = base_attr();
      if (fused_post_op(act)) {
        dnnl::post_ops po;
        append_post_op(po, act);
        attr.set_post_ops(po);
      }
      auto pd = forward_pd(d, bias, attr, engine_);
      auto entry = std::make_unique<ConvEntry>();
      entry->conv = bias ? make_primitive(pd, {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_BIAS, DNNL_ARG_DST})
                         : make_primitive(pd, {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST});
      entry->weights = weights_copy(Reorder::to_primitive, d.wei_user, pd.weights_desc(), false, base_attr(), engine_,
                                    [&](const auto&... a) { return make_primitive(a...); });
      return entry;
    });
  });
  const void* weights = e.weights.to_primitive(operands.b, [&](CachedPrimitive& p) { run(p); });
  e.conv.bind(DNNL_ARG_SRC, operands.a);
  e.conv.bind(DNNL_ARG_WEIGHTS, weights);
  if (bias) e.conv.bind(DNNL_ARG_BIAS, b.raw());
  e.conv.bind(DNNL_ARG_DST, y.raw());
  run(e.conv);
  unfused_activation(act, y, s.n * s.oh * s.ow, s.oc, op);
}

void CpuBackend::conv2d_backward_data(const Tensor& dy, const Tensor& w, const Conv2DGeometry& g, Tensor& dx) {
  conv_backward_data_impl(dy, w, g, dx, false);
}

void CpuBackend::depthwise_conv2d_backward_data(const Tensor& dy, const Tensor& w, const Conv2DGeometry& g,
                                                Tensor& dx) {
  conv_backward_data_impl(dy, w, g, dx, true);
}

void CpuBackend::conv_backward_data_impl(const Tensor& dy, const Tensor& w, const Conv2DGeometry& g, Tensor& dx,
                                         bool depthwise, const std::uint16_t* dy_low) {
  enter();
  const char* op = depthwise ? "depthwise_conv2d_backward_data" : "conv2d_backward_data";
  require_activation(dy, op, "dy");
  require_float(w, op, "w");
  // With strides > 1 several input sizes give the same output size, so dx fixes the input shape.
  KERASCPP_CHECK_STATE(dx.defined(), "{}: dx is undefined; allocate it with the forward input's shape (N, H, W, {})",
                       op, w.rank() == 4 ? w.dim(2) : 0);
  require_activation(dx, op, "dx");
  ConvShape s = depthwise ? op_shapes::depthwise_conv_shape(dx, w, g, op, "dx") : conv_shape(dx, w, g, op, "dx");
  op_shapes::check_conv_dy(dy, s, op);
  if (dx.numel() == 0) return;
  if (dy.numel() == 0) {
    std::memset(dx.raw(), 0, dx.nbytes());
    return;
  }

  const ComputeOperands operands =
      dy_low ? ComputeOperands{dy_low, compute_operand(w, operand_b_), compute_data_type()} : compute_operands(dy, w);
  const auto dx_type = dnnl_type_of(dx.dtype());
  cache_.key("conv_bwd_data");
  key_geometry(cache_, s, g, depthwise);
  cache_.append(static_cast<int>(operands.dt), static_cast<int>(dx_type));
  auto& e = cache_.get<ConvEntry>([&] {
    return guarded_build(op, cache_.current_key(), [&] {
      const auto dt = operands.dt;
      ConvDescs d = conv_descs(s, g, depthwise, {dx_type, dt, dt});
      auto hint = forward_pd(conv_descs(s, g, depthwise, {dt, dt, dt}), false, base_attr(), engine_);
      dnnl::convolution_backward_data::desc desc(dnnl::algorithm::convolution_direct, d.src, d.wei_any, d.dst,
                                                 d.strides, d.pad_l, d.pad_r);
      dnnl::convolution_backward_data::primitive_desc pd(desc, base_attr(), engine_, hint);
      auto entry = std::make_unique<ConvEntry>();
      entry->conv = make_primitive(pd, {DNNL_ARG_DIFF_DST, DNNL_ARG_WEIGHTS, DNNL_ARG_DIFF_SRC});
      entry->weights = weights_copy(Reorder::to_primitive, d.wei_user, pd.weights_desc(), false, base_attr(), engine_,
                                    [&](const auto&... a) { return make_primitive(a...); });
      return entry;
    });
  });
  const void* weights = e.weights.to_primitive(operands.b, [&](CachedPrimitive& p) { run(p); });
  e.conv.bind(DNNL_ARG_DIFF_DST, operands.a);
  e.conv.bind(DNNL_ARG_WEIGHTS, weights);
  e.conv.bind(DNNL_ARG_DIFF_SRC, dx.raw());
  run(e.conv);
}

void CpuBackend::conv2d_backward_weights(const Tensor& x, const Tensor& dy, const Conv2DGeometry& g, Tensor& dw,
                                         Tensor& db, bool accumulate) {
  conv_backward_weights_impl(x, dy, g, dw, db.defined() ? &db : nullptr, accumulate, false);
}

void CpuBackend::conv2d_backward(const ActivationFn& act, const Tensor& x, const Tensor& y, const Tensor& dy,
                                 const Tensor& w, const Conv2DGeometry& g, Tensor& dw, Tensor& db, bool accumulate,
                                 Tensor& dx) {
  enter();
  // Fused only where both convolutions read a native 16-bit dz: ReLU's (or no activation's)
  // gradient rounded to 16 bits once for both, ReLU's straight from y and dy, instead of a
  // float32 dz written by the activation backward and rounded again by each convolution. Same
  // bits either way.
  const bool fuse = (act == ActivationKind::relu || act == ActivationKind::linear) &&
                    compute_data_type() != dnnl::memory::data_type::f32;
  if (!fuse) return Backend::conv2d_backward(act, x, y, dy, w, g, dw, db, accumulate, dx);
  const char* op = "conv2d_backward";
  require_activation(dy, op, "dy");
  const std::uint16_t* dz = nullptr;
  if (act == ActivationKind::linear) {
    dz = static_cast<const std::uint16_t*>(compute_operand(dy, fused_dz_));
  } else {
    require_activation(y, op, "y");
    op_shapes::require_same_shape(y, "y", dy, "dy", op);
    require_same_dtype(y, "y", dy, "dy", op, "a gradient has its activation's dtype");
    auto* out = static_cast<std::uint16_t*>(fused_dz_.bytes(static_cast<std::size_t>(dy.numel()) * 2));
    if (y.dtype() == DType::float32)
      relu_backward_narrow(y.data<float>(), dy.data<float>(), out, compute_dtype(), dy.numel());
    else  // 16-bit activations (low_precision_activations): dz in the same dtype
      relu_backward_keep_nan(static_cast<const std::uint16_t*>(y.raw()), static_cast<const std::uint16_t*>(dy.raw()),
                             out, y.dtype(), dy.numel());
    dz = out;
  }
  conv_backward_weights_impl(x, dy, g, dw, db.defined() ? &db : nullptr, accumulate, false, dz);
  if (dx.defined()) conv_backward_data_impl(dy, w, g, dx, false, dz);
}

void CpuBackend::depthwise_conv2d_backward_weights(const Tensor& x, const Tensor& dy, const Conv2DGeometry& g,
                                                   Tensor& dw, Tensor& db, bool accumulate) {
  conv_backward_weights_impl(x, dy, g, dw, db.defined() ? &db : nullptr, accumulate, true);
}

void CpuBackend::conv_backward_weights_impl(const Tensor& x, const Tensor& dy, const Conv2DGeometry& g, Tensor& dw,
                                            Tensor* db, bool accumulate, bool depthwise, const std::uint16_t* dy_low) {
  enter();
  const char* op = depthwise ? "depthwise_conv2d_backward_weights" : "conv2d_backward_weights";
  require_activation(x, op, "x");
  require_activation(dy, op, "dy");
  op_shapes::check_conv_weights_args(x, dy, g, op);
  const Shape dw_shape =
      depthwise ? op_shapes::depthwise_kernel_shape(x, dy, g, op) : Shape{g.kernel_h, g.kernel_w, x.dim(3), dy.dim(3)};
  if (!dw.defined()) dw = Tensor::zeros(dw_shape, DType::float32, Device{});
  prepare_output(dw, dw_shape, op, "dw");
  ConvShape s = depthwise ? op_shapes::depthwise_conv_shape(x, dw, g, op, "x") : conv_shape(x, dw, g, op, "x");
  op_shapes::check_conv_dy(dy, s, op);
  const bool bias = db != nullptr;
  if (bias) prepare_output(*db, {s.oc}, op, "db");
  if (dw.numel() == 0) return;
  if (x.numel() == 0 || dy.numel() == 0) {
    if (!accumulate) {
      std::memset(dw.raw(), 0, dw.nbytes());
      if (bias) std::memset(db->raw(), 0, db->nbytes());
    }
    return;
  }

  if (!depthwise && strided_pointwise(g)) {
    Conv2DGeometry unit = g;
    unit.stride_h = unit.stride_w = 1;
    conv_backward_weights_impl(strided_pixels(x, s, g), dy, unit, dw, db, accumulate, false, dy_low);
    return;
  }

  // Each weight's gradient sums n·oh·ow products, which oneDNN's float32 kernels add into one
  // float running sum per thread: the rounding error grows with the rows a thread sums, and the
  // sum cancels (a BatchNormalization after the convolution makes Σdy zero per channel). Over the
  // 43,264 rows of a 26x26 feature map at batch 64 that put the kernel gradient 4-9x further from
  // a float64 one than Keras/JAX's blocked sums (issue 49). Larger batches are summed in chunks of
  // whole images, kWeightGradRows rows per thread (oneDNN splits a chunk's images over its
  // threads), and the chunks added in double in order.
  if (!depthwise && !dy_low && compute_data_type() == kF32 && x.dtype() == DType::float32 &&
      dy.dtype() == DType::float32) {
    const std::int64_t image_rows = std::max<std::int64_t>(1, s.oh * s.ow);
    const std::int64_t chunk_rows = kWeightGradRows * std::max(1, threads_);
    const std::int64_t images = std::max<std::int64_t>(1, chunk_rows / image_rows);
    if (s.n > images) {
      conv_backward_weights_chunked(x, dy, g, dw, db, accumulate, images);
      return;
    }
  }

  const ComputeOperands operands =
      dy_low ? ComputeOperands{compute_operand(x, operand_a_), dy_low, compute_data_type()} : compute_operands(x, dy);
  // oneDNN 2.6's float32 backward-weights kernels sum the bias gradient over NHWC rows with a
  // scalar-width loop: 1.3 of the 2.9 ms of the official MNIST CNN's first convolution at batch
  // 256, 0.7 ms of its second (bench/README.md). The backend's vectorised row sums do it in a
  // fraction of that, so the float32 primitive is built without a bias. Its 16-bit kernels sum
  // the bias fast and keep it.
  const bool own_bias = bias && operands.dt == kF32;
  const bool primitive_bias = bias && !own_bias;
  cache_.key("conv_bwd_weights");
  key_geometry(cache_, s, g, depthwise);
  cache_.append(primitive_bias, accumulate, static_cast<int>(operands.dt));
  auto& e = cache_.get<ConvEntry>([&] {
    return guarded_build(op, cache_.current_key(), [&] {
      const auto dt = operands.dt;
      ConvDescs d = conv_descs(s, g, depthwise, {dt, kF32, dt});
      auto hint = forward_pd(conv_descs(s, g, depthwise, {dt, dt, dt}), primitive_bias, base_attr(), engine_);
      auto desc = primitive_bias
                      ? dnnl::convolution_backward_weights::desc(dnnl::algorithm::convolution_direct, d.src, d.wei_any,
                                                                 d.bias, d.dst, d.strides, d.pad_l, d.pad_r)
                      : dnnl::convolution_backward_weights::desc(dnnl::algorithm::convolution_direct, d.src, d.wei_any,
                                                                 d.dst, d.strides, d.pad_l, d.pad_r);
      dnnl::convolution_backward_weights::primitive_desc pd(desc, base_attr(), engine_, hint);
      auto entry = std::make_unique<ConvEntry>();
      entry->conv =
          primitive_bias
              ? make_primitive(pd, {DNNL_ARG_SRC, DNNL_ARG_DIFF_DST, DNNL_ARG_DIFF_WEIGHTS, DNNL_ARG_DIFF_BIAS})
              : make_primitive(pd, {DNNL_ARG_SRC, DNNL_ARG_DIFF_DST, DNNL_ARG_DIFF_WEIGHTS});
      entry->weights = weights_copy(Reorder::to_user, d.wei_user, pd.diff_weights_desc(), accumulate, base_attr(),
                                    engine_, [&](const auto&... a) { return make_primitive(a...); });
      return entry;
    });
  });
  float* bias_out = nullptr;
  if (primitive_bias) bias_out = accumulate ? channel_a_.floats(s.oc) : db->data<float>();
  e.conv.bind(DNNL_ARG_SRC, operands.a);
  e.conv.bind(DNNL_ARG_DIFF_DST, operands.b);
  e.conv.bind(DNNL_ARG_DIFF_WEIGHTS, e.weights.primitive_side(dw.raw()));
  if (primitive_bias) e.conv.bind(DNNL_ARG_DIFF_BIAS, bias_out);
  run(e.conv);
  e.weights.to_user(dw.raw(), [&](CachedPrimitive& p) { run(p); });
  if (own_bias)  // over the operand as the kernel read it (rounded when 16 bits are emulated)
    row_sums(operands.b, DType::float32, s.n * s.oh * s.ow, s.oc, db->data<float>(), accumulate);
  if (primitive_bias && accumulate) {
    float* pdb = db->data<float>();
    for (std::int64_t c = 0; c < s.oc; ++c) pdb[c] += bias_out[c];
  }
}

void CpuBackend::conv_backward_weights_chunked(const Tensor& x, const Tensor& dy, const Conv2DGeometry& g, Tensor& dw,
                                               Tensor* db, bool accumulate, std::int64_t images) {
  // Every chunk's gradient is written to `part` by the primitive of the chunk's shape (at most two
  // shapes, cached: whole chunks and the last), then added in double in chunk order. The bias
  // gradient is the float32 path's own double row sums over the whole batch, as unchunked.
  const std::int64_t n = x.dim(0);
  Tensor part(dw.shape(), DType::float32, Device{});
  std::vector<double> sum(static_cast<std::size_t>(dw.numel()), 0.0);
  const float* pp = part.data<float>();
  for (std::int64_t i = 0; i < n; i += images) {
    const std::int64_t end = std::min(n, i + images);
    conv_backward_weights_impl(x.slice(i, end), dy.slice(i, end), g, part, nullptr, false, false);
    for (std::size_t k = 0; k < sum.size(); ++k) sum[k] += pp[k];
  }
  float* pw = dw.data<float>();
  for (std::size_t k = 0; k < sum.size(); ++k)
    pw[k] = static_cast<float>(accumulate ? sum[k] + static_cast<double>(pw[k]) : sum[k]);
  if (db) row_sums(dy.raw(), DType::float32, dy.numel() / dy.dim(3), dy.dim(3), db->data<float>(), accumulate);
}

}  // namespace kerascpp::cpu
