// MaxPooling1D/3D and AveragePooling1D/3D as one or two calls of the Backend's 2-D pooling ops
// (oneDNN, cuDNN), so they run on the same primitives as MaxPooling2D with no op of their own:
//  * 1-D: (B, T, C) is the image (B, 1, T, C), pooled over 1 x k windows;
//  * 3-D: each depth slice (B·D, H, W, C) is pooled over its (height, width) windows, then the
//    result, viewed as (B, D, H'·W', C), over depth windows of k x 1. Max over a box is the max
//    over depth of the max over each slice; the mean with padding excluded is likewise the mean
//    over the valid depths of each slice's mean over its valid pixels (every slice of one window
//    has the same number of them), so both split exactly (the mean up to float rounding).
#include "kerascpp/core/layer_config.hpp"
#include "kerascpp/layers/pooling.hpp"

#include <algorithm>

#include "check.hpp"
#include "layer_util.hpp"
#include "pool_steps.hpp"

namespace kerascpp::layers {

PoolingNDLayer::PoolingNDLayer(PoolKind kind, std::vector<std::int64_t> pool_size, std::vector<std::int64_t> strides,
                               Padding padding, std::string name)
    : Layer(std::move(name)),
      kind_(kind),
      pool_size_(std::move(pool_size)),
      strides_(std::move(strides)),
      padding_(padding) {
  KERASCPP_CHECK_VALUE((pool_size_.size() == 1 || pool_size_.size() == 3) && strides_.size() == pool_size_.size(),
                       "Pooling '{}': one pool size and one stride per spatial axis (1 or 3 axes)", Layer::name());
  auto positive = [](const std::vector<std::int64_t>& v) {
    return std::all_of(v.begin(), v.end(), [](std::int64_t s) { return s > 0; });
  };
  KERASCPP_CHECK_VALUE(positive(pool_size_), "{} '{}': pool_size must be positive on every axis", class_name(),
                       Layer::name());
  KERASCPP_CHECK_VALUE(positive(strides_),
                       "{} '{}': strides must be positive on every axis (or left unset for the pool size)",
                       class_name(), Layer::name());
  KERASCPP_CHECK_VALUE(padding_ == Padding::valid || padding_ == Padding::same,
                       "{} '{}': padding must be Padding::valid or Padding::same, got {}", class_name(), Layer::name(),
                       padding_name(padding_));
  set_input_spec(detail::spatial_spec(pool_size_.size()));
}

std::string PoolingNDLayer::class_name() const {
  return (kind_ == PoolKind::max ? "MaxPooling" : "AveragePooling") + std::to_string(pool_size_.size()) + "D";
}

std::vector<Shape> PoolingNDLayer::compute_output_shapes(const std::vector<Shape>& in) {
  Shape out = in[0];
  const bool same = padding_ == Padding::same;
  for (std::size_t i = 0; i < pool_size_.size(); ++i) {
    KERASCPP_CHECK_SHAPE(same || out[i] >= pool_size_[i],
                         "{}: pool size {} is larger than spatial axis {} (size {}) of the input {}", where(),
                         pool_size_[i], i + 1, out[i], shape_str(detail::with_batch(-1, in[0])));
    out[i] = detail::window_output(out[i], pool_size_[i], strides_[i], same);
  }
  return {out};
}

namespace {

// One 2-D pooling call: the input viewed as in_view, pooled with g into out_view.
struct Stage {
  Shape in_view, out_view;
  Pool2DGeometry g;
};

// The 2-D pooling geometry over windows (kh, kw) with strides (sh, sw) of an (h, w) image.
Pool2DGeometry geometry(PoolKind kind, Padding padding, std::int64_t h, std::int64_t kh, std::int64_t sh,
                        std::int64_t w, std::int64_t kw, std::int64_t sw) {
  Pool2DGeometry g;
  g.kind = kind;
  g.pool_h = kh;
  g.stride_h = sh;
  g.pool_w = kw;
  g.stride_w = sw;
  if (padding == Padding::same) {
    detail::same_padding(h, kh, sh, g.pad_top, g.pad_bottom);
    detail::same_padding(w, kw, sw, g.pad_left, g.pad_right);
  }
  return g;
}

std::vector<Stage> stages_for(PoolKind kind, Padding padding, const std::vector<std::int64_t>& k,
                              const std::vector<std::int64_t>& s, const Shape& x) {
  const bool same = padding == Padding::same;
  auto out = [&](std::size_t i, std::int64_t size) { return detail::window_output(size, k[i], s[i], same); };
  const std::int64_t B = x[0], C = x.back();
  if (k.size() == 1) {
    const std::int64_t T = x[1];
    return {{{B, 1, T, C}, {B, 1, out(0, T), C}, geometry(kind, padding, 1, 1, 1, T, k[0], s[0])}};
  }
  const std::int64_t D = x[1], H = x[2], W = x[3], Ho = out(1, H), Wo = out(2, W);
  return {{{B * D, H, W, C}, {B * D, Ho, Wo, C}, geometry(kind, padding, H, k[1], s[1], W, k[2], s[2])},
          {{B, D, Ho * Wo, C}, {B, out(0, D), Ho * Wo, C}, geometry(kind, padding, D, k[0], s[0], 1, 1, 1)}};
}

// Runs the stages on x; with `keep`, st.saved holds (stage input, workspace) per stage for the backward.
Tensor run_stages(Backend& be, const std::vector<Stage>& stages, const Tensor& x, bool keep, LayerState& st) {
  st.saved.clear();
  Tensor cur = x;
  for (const Stage& stage : stages) {
    Tensor in = cur.reshape(stage.in_view);
    Tensor y(stage.out_view, x.dtype());
    if (keep) {
      Tensor workspace;
      be.pool2d_forward(in, stage.g, y, workspace);
      st.saved.push_back(in);
      st.saved.push_back(workspace);
    } else {
      be.pool2d_forward_inference(in, stage.g, y);
    }
    cur = y;
  }
  return cur;
}

}  // namespace

std::vector<Tensor> PoolingNDLayer::forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) {
  const Tensor& x = in[0];
  Shape out = detail::with_batch(x.dim(0), compute_output_shapes({Shape(x.shape().begin() + 1, x.shape().end())})[0]);
  const auto stages = stages_for(kind_, padding_, pool_size_, strides_, x.shape());
  return {run_stages(*ctx.backend, stages, x, ctx.training, st).reshape(out)};
}

std::vector<Tensor> PoolingNDLayer::backward(ReplicaContext& ctx, const std::vector<Tensor>& in,
                                             const std::vector<Tensor>&, const std::vector<Tensor>& grads,
                                             LayerState& st) {
  const auto stages = stages_for(kind_, padding_, pool_size_, strides_, in[0].shape());
  // A backward after a forward without training (Model::forward): pool again, keeping the workspaces.
  if (st.saved.size() != 2 * stages.size()) run_stages(*ctx.backend, stages, in[0], true, st);
  Tensor d = grads[0];
  for (std::size_t i = stages.size(); i-- > 0;) {
    Tensor dx(stages[i].in_view, in[0].dtype());
    ctx.backend->pool2d_backward(d.reshape(stages[i].out_view), st.saved[2 * i], stages[i].g, st.saved[2 * i + 1], dx);
    d = dx;
  }
  return {d.reshape(in[0].shape())};
}

Json PoolingNDLayer::get_config() const {
  return detail::Json({{"name", name()},
                       {"pool_size", pool_size_},
                       {"padding", padding_name(padding_)},
                       {"strides", strides_},
                       {"data_format", "channels_last"}});
}

LayerRef MaxPooling1D(std::int64_t pool_size, Pooling1DOptions options) {
  return std::make_shared<PoolingNDLayer>(PoolKind::max, std::vector<std::int64_t>{pool_size},
                                          std::vector<std::int64_t>{options.strides.value_or(pool_size)},
                                          options.padding, std::move(options.name));
}
LayerRef AveragePooling1D(std::int64_t pool_size, Pooling1DOptions options) {
  return std::make_shared<PoolingNDLayer>(PoolKind::average, std::vector<std::int64_t>{pool_size},
                                          std::vector<std::int64_t>{options.strides.value_or(pool_size)},
                                          options.padding, std::move(options.name));
}

namespace {
std::vector<std::int64_t> sizes(const Size3D& s) { return {s.depth, s.height, s.width}; }
}  // namespace

LayerRef MaxPooling3D(Size3D pool_size, Pooling3DOptions options) {
  return std::make_shared<PoolingNDLayer>(PoolKind::max, sizes(pool_size), sizes(options.strides.value_or(pool_size)),
                                          options.padding, std::move(options.name));
}
LayerRef AveragePooling3D(Size3D pool_size, Pooling3DOptions options) {
  return std::make_shared<PoolingNDLayer>(PoolKind::average, sizes(pool_size),
                                          sizes(options.strides.value_or(pool_size)), options.padding,
                                          std::move(options.name));
}

namespace {
// Keras' configs: strides default to the pool size (strides=None).
template <PoolKind Kind>
LayerRef pooling1d_from_config(const LayerConfig& c) {
  c.expect_channels_last();
  const std::int64_t pool = c.size1d("pool_size", 2);
  return std::make_shared<PoolingNDLayer>(Kind, std::vector<std::int64_t>{pool},
                                          std::vector<std::int64_t>{c.size1d("strides", pool)}, c.padding(), c.name());
}
template <PoolKind Kind>
LayerRef pooling3d_from_config(const LayerConfig& c) {
  c.expect_channels_last();
  const Size3D pool = c.size3d("pool_size", 2);
  const Size3D strides = c.find("strides") ? c.size3d("strides", 1) : pool;
  return std::make_shared<PoolingNDLayer>(Kind, sizes(pool), sizes(strides), c.padding(), c.name());
}
}  // namespace

KERASCPP_REGISTER_LAYER("MaxPooling1D", pooling1d_from_config<PoolKind::max>);
KERASCPP_REGISTER_LAYER("AveragePooling1D", pooling1d_from_config<PoolKind::average>);
KERASCPP_REGISTER_LAYER("MaxPooling3D", pooling3d_from_config<PoolKind::max>);
KERASCPP_REGISTER_LAYER("AveragePooling3D", pooling3d_from_config<PoolKind::average>);

}  // namespace kerascpp::layers
