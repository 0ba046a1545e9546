// 2-D max and average pooling, NHWC. Max pooling over disjoint windows (the Keras default) runs
// max_pool_disjoint's loops, whose workspace is one argmax byte per output; the rest runs on
// oneDNN, which keeps its own argmax workspace for the backward pass. Average pooling excludes
// padding from the divisor like Keras. oneDNN's max skips NaN; a window holding one is made NaN
// afterwards, as in Keras (the backward pass still routes the window's gradient, NaN by then, to
// oneDNN's argmax).
#include <fmt/format.h>

#include <cstring>

#include "backend/cpu/checks.hpp"
#include "backend/cpu/cpu_backend.hpp"
#include "backend/cpu/dnnl_util.hpp"
#include "backend/cpu/max_pool_disjoint.hpp"
#include "backend/cpu/nan_propagation.hpp"
#include "check.hpp"

namespace kerascpp::cpu {

namespace {

// Geometry and shape checks are shared with the CUDA backend (backend/op_shapes.*).
using op_shapes::pool_shape;
using op_shapes::PoolShape;

dnnl::algorithm pool_alg(PoolKind kind) {
  return kind == PoolKind::max ? dnnl::algorithm::pooling_max : dnnl::algorithm::pooling_avg_exclude_padding;
}

// `dt`: the activations' data type (float32, or 16 bits under mixed precision).
// inference: oneDNN's forward_inference kernel, which keeps no workspace (on the Intel VM 0.47
// against 1.50 ms for max pooling 128x26x26x32, bench/README.md "Max pooling").
dnnl::pooling_forward::primitive_desc pool_forward_pd(const PoolShape& s, const Pool2DGeometry& g,
                                                      dnnl::memory::data_type dt, bool inference,
                                                      const dnnl::primitive_attr& attr, const dnnl::engine& engine) {
  dnnl::pooling_forward::desc desc(inference ? dnnl::prop_kind::forward_inference : dnnl::prop_kind::forward_training,
                                   pool_alg(g.kind), typed_md({s.n, s.c, s.ih, s.iw}, dt, tag::nhwc),
                                   typed_md({s.n, s.c, s.oh, s.ow}, dt, tag::nhwc), {g.stride_h, g.stride_w},
                                   {g.pool_h, g.pool_w}, {g.pad_top, g.pad_left}, {g.pad_bottom, g.pad_right});
  return {desc, attr, engine};
}

struct PoolEntry : CacheEntry {
  CachedPrimitive pool;
  std::size_t workspace_bytes = 0;
};

void key_pool(PrimitiveCache& cache, const PoolShape& s, const Pool2DGeometry& g, dnnl::memory::data_type dt) {
  cache.append(static_cast<int>(g.kind), s.n, s.ih, s.iw, s.c, g.pool_h, g.pool_w, g.stride_h, g.stride_w, g.pad_top,
               g.pad_left, g.pad_bottom, g.pad_right, static_cast<int>(dt));
}

constexpr const char* kKeepsDtype = "pooling keeps its input's dtype";

std::string workspace_str(const Tensor& workspace) {
  return workspace.defined() ? fmt::format("{} bytes of {}", workspace.nbytes(), dtype_name(workspace.dtype()))
                             : std::string("an undefined tensor");
}

// max_pool_mark_nan for 16-bit x and y, through float32 copies (NaN inputs are rare).
void max_pool_mark_nan_16(Backend& backend, const Tensor& x, const PoolShape& s, const Pool2DGeometry& g, Tensor& y) {
  Tensor wide_x, wide_y;
  backend.cast(x, DType::float32, wide_x);
  backend.cast(y, DType::float32, wide_y);
  max_pool_mark_nan(wide_x.data<float>(), s, g, wide_y.data<float>());
  backend.cast(wide_y, y.dtype(), y);
}

}  // namespace

void CpuBackend::pool2d_forward(const Tensor& x, const Pool2DGeometry& g, Tensor& y, Tensor& workspace) {
  pool2d_forward(x, g, y, &workspace, false, "pool2d_forward");
}

void CpuBackend::pool2d_forward_relu(const Tensor& x, const Pool2DGeometry& g, Tensor& y, Tensor& workspace) {
  op_shapes::require_max_pooling(g, "pool2d_forward_relu");
  pool2d_forward(x, g, y, &workspace, true, "pool2d_forward_relu");
}

void CpuBackend::pool2d_forward_inference(const Tensor& x, const Pool2DGeometry& g, Tensor& y, bool relu) {
  if (relu) op_shapes::require_max_pooling(g, "pool2d_forward_inference");
  pool2d_forward(x, g, y, nullptr, relu, "pool2d_forward_inference");
}

void CpuBackend::pool2d_forward(const Tensor& x, const Pool2DGeometry& g, Tensor& y, Tensor* workspace, bool relu,
                                const char* op) {
  enter();
  require_activation(x, op, "x");
  PoolShape s = pool_shape(x, g, op);
  prepare_activation(y, {s.n, s.oh, s.ow, s.c}, x.dtype(), op, "y");
  require_same_dtype(x, "x", y, "y", op, kKeepsDtype);
  if (y.numel() == 0) return;
  const bool max = g.kind == PoolKind::max;
  if (max_pool_disjoint_applies(g, x.dtype())) {
    std::uint8_t* argmax = nullptr;
    if (workspace) {
      if (!workspace->defined() || workspace->dtype() != DType::uint8 || workspace->numel() < y.numel() ||
          workspace->device().kind != Device::Kind::cpu)
        *workspace = Tensor({y.numel()}, DType::uint8, Device{});
      argmax = workspace->data<std::uint8_t>();
    }
    max_pool_disjoint_forward(x.raw(), s, g, x.dtype(), y.raw(), argmax, relu);
    return;
  }

  const auto dt = dnnl_type_of(x.dtype());
  const bool keeps_workspace = max && workspace;
  cache_.key("pool_fwd");
  key_pool(cache_, s, g, dt);
  cache_.append(workspace == nullptr);
  auto& e = cache_.get<PoolEntry>([&] {
    return guarded_build(op, cache_.current_key(), [&] {
      auto pd = pool_forward_pd(s, g, dt, workspace == nullptr, base_attr(), engine_);
      auto entry = std::make_unique<PoolEntry>();
      if (keeps_workspace) {
        entry->pool = make_primitive(pd, {DNNL_ARG_SRC, DNNL_ARG_DST, DNNL_ARG_WORKSPACE});
        entry->workspace_bytes = pd.workspace_desc().get_size();
      } else {
        entry->pool = make_primitive(pd, {DNNL_ARG_SRC, DNNL_ARG_DST});
      }
      return entry;
    });
  });
  e.pool.bind(DNNL_ARG_SRC, x.raw());
  e.pool.bind(DNNL_ARG_DST, y.raw());
  if (keeps_workspace) {
    if (!workspace->defined() || workspace->dtype() != DType::uint8 || workspace->nbytes() < e.workspace_bytes ||
        workspace->device().kind != Device::Kind::cpu)
      *workspace = Tensor({static_cast<std::int64_t>(e.workspace_bytes)}, DType::uint8, Device{});
    e.pool.bind(DNNL_ARG_WORKSPACE, workspace->raw());
  }
  run(e.pool);
  if (max) {
    if (x.dtype() == DType::float32) {
      if (contains_nan(x.data<float>(), x.numel())) max_pool_mark_nan(x.data<float>(), s, g, y.data<float>());
    } else if (contains_nan(static_cast<const std::uint16_t*>(x.raw()), x.dtype(), x.numel())) {
      max_pool_mark_nan_16(*this, x, s, g, y);
    }
  }
  if (relu) unfused_activation(ActivationKind::relu, y, y.numel(), 1, op);
}

void CpuBackend::pool2d_backward(const Tensor& dy, const Tensor& x, const Pool2DGeometry& g, const Tensor& workspace,
                                 Tensor& dx) {
  pool2d_backward(dy, x, g, workspace, dx, nullptr, "pool2d_backward");
}

void CpuBackend::pool2d_backward(const Tensor& dy, const Tensor& x, const Pool2DGeometry& g, const Tensor& workspace,
                                 Tensor& dx, const Tensor* relu_y, const char* op, Tensor* channel_sums) {
  enter();
  require_activation(dy, op, "dy");
  require_activation(x, op, "x");
  PoolShape s = pool_shape(x, g, op);
  op_shapes::check_pool_dy(dy, x, s, op);
  prepare_activation(dx, x.shape(), x.dtype(), op, "dx");
  require_same_dtype(x, "x", dy, "dy", op, kKeepsDtype);
  require_same_dtype(x, "x", dx, "dx", op, kKeepsDtype);
  if (dx.numel() == 0) return;
  if (dy.numel() == 0) {
    std::memset(dx.raw(), 0, dx.nbytes());
    return;
  }
  if (max_pool_disjoint_applies(g, x.dtype())) {
    KERASCPP_CHECK_STATE(workspace.defined() && workspace.dtype() == DType::uint8 && workspace.numel() >= dy.numel(),
                         "{}: max pooling needs the workspace ({} bytes) filled by pool2d_forward on the "
                         "same input; got {}",
                         op, dy.numel(), workspace_str(workspace));
    // Only where the producer's own sums would be over float32 values: under a 16-bit compute
    // dtype its convolution reads the gradient rounded, and its bias gradient is that one's.
    const bool sums = channel_sums && relu_y && x.dtype() == DType::float32 && compute_dtype() == DType::float32;
    if (sums) sums_.resize(static_cast<std::size_t>(s.c));
    const ChannelSums to{sums_.data(), partials_};
    max_pool_disjoint_backward(dy.raw(), workspace.data<std::uint8_t>(), s, g, x.dtype(), dx.raw(),
                               relu_y ? relu_y->raw() : nullptr, sums ? &to : nullptr);
    if (sums) {
      *channel_sums = Tensor({s.c}, DType::float32, Device{});
      float* out = channel_sums->data<float>();
      for (std::int64_t c = 0; c < s.c; ++c) out[c] = static_cast<float>(sums_[c]);
    }
    return;
  }

  const auto dt = dnnl_type_of(x.dtype());
  cache_.key("pool_bwd");
  key_pool(cache_, s, g, dt);
  auto& e = cache_.get<PoolEntry>([&] {
    return guarded_build(op, cache_.current_key(), [&] {
      auto hint = pool_forward_pd(s, g, dt, false, base_attr(), engine_);
      dnnl::pooling_backward::desc desc(pool_alg(g.kind), typed_md({s.n, s.c, s.ih, s.iw}, dt, tag::nhwc),
                                        typed_md({s.n, s.c, s.oh, s.ow}, dt, tag::nhwc), {g.stride_h, g.stride_w},
                                        {g.pool_h, g.pool_w}, {g.pad_top, g.pad_left}, {g.pad_bottom, g.pad_right});
      dnnl::pooling_backward::primitive_desc pd(desc, base_attr(), engine_, hint);
      auto entry = std::make_unique<PoolEntry>();
      if (g.kind == PoolKind::max) {
        entry->pool = make_primitive(pd, {DNNL_ARG_DIFF_DST, DNNL_ARG_DIFF_SRC, DNNL_ARG_WORKSPACE});
        entry->workspace_bytes = pd.workspace_desc().get_size();
      } else {
        entry->pool = make_primitive(pd, {DNNL_ARG_DIFF_DST, DNNL_ARG_DIFF_SRC});
      }
      return entry;
    });
  });
  if (g.kind == PoolKind::max) {
    KERASCPP_CHECK_STATE(
        workspace.defined() && workspace.dtype() == DType::uint8 && workspace.nbytes() >= e.workspace_bytes,
        "{}: max pooling needs the workspace ({} bytes) filled by pool2d_forward on the same "
        "input; got {}",
        op, e.workspace_bytes, workspace_str(workspace));
    e.pool.bind(DNNL_ARG_WORKSPACE, workspace.raw());
  }
  e.pool.bind(DNNL_ARG_DIFF_DST, dy.raw());
  e.pool.bind(DNNL_ARG_DIFF_SRC, dx.raw());
  run(e.pool);
}

void CpuBackend::pool2d_backward_through_relu(const Tensor& dy, const Tensor& x, const Tensor& y,
                                              const Pool2DGeometry& g, const Tensor& workspace, Tensor& dx,
                                              Tensor* dx_channel_sums) {
  enter();
  if (dx_channel_sums) *dx_channel_sums = Tensor();
  const char* op = "pool2d_backward_through_relu";
  require_activation(y, op, "y");
  // The mask at the pooled resolution: each window's gradient goes to its argmax, whose input
  // equals the window's output y, so (y > 0) is the ReLU's mask there, and a window whose y is
  // not positive gives +0 (NaN for a NaN or Inf gradient) as the ReLU's backward would: the same
  // bits.
  // Not for a window holding a NaN on oneDNN's path: its y is NaN (pool2d_forward marks it) while
  // oneDNN's argmax may be a number; max_pool_disjoint's argmax is that NaN, whose ReLU backward
  // the mask gives. Nor where windows overlap: two finite gradients summed at one input may
  // overflow to Inf, which the ReLU's backward turns into NaN and the mask into 0. Nor for
  // average pooling, which spreads its gradient. Those take the two ops as stated.
  const bool disjoint = g.kind == PoolKind::max && g.stride_h >= g.pool_h && g.stride_w >= g.pool_w;
  const auto holds_nan = [&] {
    return y.dtype() == DType::float32 ? contains_nan(y.data<float>(), y.numel())
                                       : contains_nan(static_cast<const std::uint16_t*>(y.raw()), y.dtype(), y.numel());
  };
  if (!disjoint || (!max_pool_disjoint_applies(g, y.dtype()) && holds_nan()))
    return Backend::pool2d_backward_through_relu(dy, x, y, g, workspace, dx, dx_channel_sums);
  if (max_pool_disjoint_applies(g, x.dtype())) {  // the ReLU's backward inside the pooling's loop
    require_same_shape(y, "y", dy, "dy", op);
    require_same_dtype(x, "x", y, "y", op, kKeepsDtype);
    return pool2d_backward(dy, x, g, workspace, dx, &y, op, dx_channel_sums);
  }
  Tensor masked(dy.shape(), dy.dtype());
  activation_backward(ActivationKind::relu, y, dy, masked);
  pool2d_backward(masked, x, g, workspace, dx);
}

}  // namespace kerascpp::cpu
