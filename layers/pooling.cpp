#include "kerascpp/layers/pooling.hpp"
#include "kerascpp/core/layer_config.hpp"

#include "check.hpp"
#include "layer_util.hpp"
#include "pool_steps.hpp"

namespace kerascpp::layers {

Pooling2DLayer::Pooling2DLayer(PoolKind kind, Size2D pool_size, Pooling2DOptions options)
    : Layer(options.name),
      kind_(kind),
      pool_size_(pool_size),
      strides_(options.strides.value_or(pool_size)),
      padding_(options.padding) {
  KERASCPP_CHECK_VALUE(pool_size_.positive(), "{} '{}': pool_size must be positive, got {{{}, {}}}", class_name(),
                       name(), pool_size_.height, pool_size_.width);
  KERASCPP_CHECK_VALUE(strides_.positive(),
                       "{} '{}': strides must be positive (or left unset for the pool size), got {{{}, {}}}",
                       class_name(), name(), strides_.height, strides_.width);
  KERASCPP_CHECK_VALUE(padding_ == Padding::valid || padding_ == Padding::same,
                       "{} '{}': padding must be Padding::valid or Padding::same, got {}", class_name(), name(),
                       static_cast<int>(padding_));
  set_input_spec(detail::nhwc_image_spec());
}

Pool2DGeometry Pooling2DLayer::geometry_for(std::int64_t h, std::int64_t w) const {
  Pool2DGeometry g;
  g.kind = kind_;
  g.pool_h = pool_size_.height;
  g.pool_w = pool_size_.width;
  g.stride_h = strides_.height;
  g.stride_w = strides_.width;
  if (padding_ == Padding::same) {
    detail::same_padding(h, g.pool_h, g.stride_h, g.pad_top, g.pad_bottom);
    detail::same_padding(w, g.pool_w, g.stride_w, g.pad_left, g.pad_right);
  }
  return g;
}

std::vector<Shape> Pooling2DLayer::compute_output_shapes(const std::vector<Shape>& in) {
  const Shape& s = in[0];  // (height, width, channels): the input spec holds
  const bool same = padding_ == Padding::same;
  KERASCPP_CHECK_SHAPE(same || (s[0] >= pool_size_.height && s[1] >= pool_size_.width),
                       "{}: pool {}x{} is larger than the input {}", where(), pool_size_.height, pool_size_.width,
                       shape_str(detail::with_batch(-1, s)));
  return {{detail::window_output(s[0], pool_size_.height, strides_.height, same),
           detail::window_output(s[1], pool_size_.width, strides_.width, same), s[2]}};
}

std::vector<Tensor> Pooling2DLayer::forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) {
  const Tensor& x = in[0];
  const bool same = padding_ == Padding::same;
  Pool2DGeometry g = geometry_for(x.dim(1), x.dim(2));
  Tensor y({x.dim(0), detail::window_output(x.dim(1), g.pool_h, g.stride_h, same),
            detail::window_output(x.dim(2), g.pool_w, g.stride_w, same), x.dim(3)},
           x.dtype());
  detail::pool_forward(ctx, x, g, st.input_relu_deferred, y, st);  // relu: the producer's, moved here (LayerState)
  return {y};
}

std::vector<Tensor> Pooling2DLayer::backward(ReplicaContext& ctx, const std::vector<Tensor>& in,
                                             const std::vector<Tensor>& out, const std::vector<Tensor>& grads,
                                             LayerState& st) {
  Pool2DGeometry g = geometry_for(in[0].dim(1), in[0].dim(2));
  Tensor dx(in[0].shape(), in[0].dtype());
  const Tensor& workspace = detail::pool_backward_workspace(ctx, in[0], g, st.input_relu_deferred, st);
  if (st.input_grad_through_relu)  // the producer's ReLU backward (and bias gradient), moved here (LayerState)
    ctx.backend->pool2d_backward_through_relu(grads[0], in[0], out[0], g, workspace, dx, &st.input_grad_channel_sums);
  else ctx.backend->pool2d_backward(grads[0], in[0], g, workspace, dx);
  return {dx};
}

Json Pooling2DLayer::get_config() const {
  return detail::Json({{"name", name()},
                       {"pool_size", detail::json_size2d(pool_size_)},
                       {"strides", detail::json_size2d(strides_)},
                       {"padding", padding_name(padding_)}});
}

LayerRef MaxPooling2D(Size2D pool_size, Pooling2DOptions options) {
  return std::make_shared<Pooling2DLayer>(PoolKind::max, pool_size, std::move(options));
}
LayerRef AveragePooling2D(Size2D pool_size, Pooling2DOptions options) {
  return std::make_shared<Pooling2DLayer>(PoolKind::average, pool_size, std::move(options));
}
namespace {
// MaxPooling2D's and AveragePooling2D's configs: strides default to the pool size, as in Keras.
template <LayerRef (*Make)(Size2D, Pooling2DOptions)>
LayerRef pooling_from_config(const LayerConfig& c) {
  c.expect_channels_last();
  const Size2D pool = c.size2d("pool_size", 2);
  return Make(pool,
              {.strides = c.find("strides") ? c.size2d("strides", 1) : pool, .padding = c.padding(), .name = c.name()});
}
}  // namespace

KERASCPP_REGISTER_LAYER("MaxPooling2D", pooling_from_config<MaxPooling2D>);
KERASCPP_REGISTER_LAYER("AveragePooling2D", pooling_from_config<AveragePooling2D>);
}  // namespace kerascpp::layers
