#include "kerascpp/layers/pooling.hpp"

#include "check.hpp"
#include "layer_util.hpp"

namespace kerascpp::layers {
namespace {

void expect_image(const std::vector<Shape>& in, const std::string& where) {
  detail::expect_inputs(in, 1, where);
  if (in[0].size() != 3)
    throw ShapeError(fmt::format("{}: expects inputs of rank 4 (batch, height, width, channels) but got shape {}", where,
                            shape_str(detail::with_batch(-1, in[0]))));
}

}  // namespace

Pooling2DLayer::Pooling2DLayer(PoolKind kind, std::int64_t pool_size, Pooling2DOptions options)
    : Layer(options.name), kind_(kind), pool_(pool_size), options_(std::move(options)) {
  if (pool_ <= 0) throw ValueError(fmt::format("Pooling2D: pool_size must be positive, got {}", pool_));
  // strides {0, 0} (the default) means "the pool size", like Keras' strides=None; anything else must
  // be two positive strides (a negative stride used to be taken as the pool size).
  const auto& st = options_.strides;
  KERASCPP_CHECK((st[0] == 0 && st[1] == 0) || (st[0] > 0 && st[1] > 0), ValueError,
                 "{} '{}': strides must be two positive numbers (or {{0, 0}} for the pool size), got {{{}, {}}}",
                 class_name(), name(), st[0], st[1]);
  if (st[0] == 0) options_.strides = {pool_, pool_};
  detail::parse_padding(options_.padding, "Pooling2D");
  geometry_.kind = kind_;
  geometry_.pool_h = geometry_.pool_w = pool_;
  geometry_.stride_h = options_.strides[0];
  geometry_.stride_w = options_.strides[1];
}

std::vector<Shape> Pooling2DLayer::compute_output_shapes(const std::vector<Shape>& in) {
  expect_image(in, where());
  const Shape& s = in[0];
  bool same = options_.padding == "same";
  if (!same && (s[0] < pool_ || s[1] < pool_))
    throw ShapeError(fmt::format("{}: pool {}x{} is larger than the input {}", where(), pool_, pool_,
                            shape_str(detail::with_batch(-1, s))));
  return {{detail::window_output(s[0], pool_, geometry_.stride_h, same),
           detail::window_output(s[1], pool_, geometry_.stride_w, same), s[2]}};
}

std::vector<Tensor> Pooling2DLayer::forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) {
  const Tensor& x = in[0];
  Pool2DGeometry g = geometry_;
  bool same = options_.padding == "same";
  if (same) {
    detail::same_padding(x.dim(1), pool_, g.stride_h, g.pad_top, g.pad_bottom);
    detail::same_padding(x.dim(2), pool_, g.stride_w, g.pad_left, g.pad_right);
  }
  Tensor y({x.dim(0), detail::window_output(x.dim(1), pool_, g.stride_h, same),
            detail::window_output(x.dim(2), pool_, g.stride_w, same), x.dim(3)});
  st.saved.resize(1);
  ctx.backend->pool2d_forward(x, g, y, st.saved[0]);
  return {y};
}

std::vector<Tensor> Pooling2DLayer::backward(ReplicaContext& ctx, const std::vector<Tensor>& in,
                                             const std::vector<Tensor>&, const std::vector<Tensor>& grads,
                                             LayerState& st) {
  Pool2DGeometry g = geometry_;
  if (options_.padding == "same") {
    detail::same_padding(in[0].dim(1), pool_, g.stride_h, g.pad_top, g.pad_bottom);
    detail::same_padding(in[0].dim(2), pool_, g.stride_w, g.pad_left, g.pad_right);
  }
  Tensor dx(in[0].shape());
  ctx.backend->pool2d_backward(grads[0], in[0], g, st.saved.at(0), dx);
  return {dx};
}

std::string Pooling2DLayer::config_json() const {
  return fmt::format(R"({{"name": "{}", "pool_size": [{}, {}], "strides": [{}, {}], "padding": "{}"}})", name(),
                     pool_, pool_, options_.strides[0], options_.strides[1], options_.padding);
}

std::vector<Shape> GlobalAveragePooling2DLayer::compute_output_shapes(const std::vector<Shape>& in) {
  expect_image(in, where());
  return {{in[0][2]}};
}

namespace {
Pool2DGeometry global_geometry(const Tensor& x) {
  Pool2DGeometry g;
  g.kind = PoolKind::average;
  g.pool_h = g.stride_h = x.dim(1);
  g.pool_w = g.stride_w = x.dim(2);
  return g;
}
}  // namespace

std::vector<Tensor> GlobalAveragePooling2DLayer::forward(ReplicaContext& ctx, const std::vector<Tensor>& in,
                                                         LayerState& st) {
  const Tensor& x = in[0];
  Tensor y({x.dim(0), 1, 1, x.dim(3)});
  st.saved.resize(1);
  ctx.backend->pool2d_forward(x, global_geometry(x), y, st.saved[0]);
  return {y.reshape({x.dim(0), x.dim(3)})};
}

std::vector<Tensor> GlobalAveragePooling2DLayer::backward(ReplicaContext& ctx, const std::vector<Tensor>& in,
                                                          const std::vector<Tensor>&, const std::vector<Tensor>& grads,
                                                          LayerState& st) {
  const Tensor& x = in[0];
  Tensor dx(x.shape());
  ctx.backend->pool2d_backward(grads[0].reshape({x.dim(0), 1, 1, x.dim(3)}), x, global_geometry(x), st.saved.at(0),
                               dx);
  return {dx};
}

LayerRef MaxPooling2D(std::int64_t pool_size, Pooling2DOptions options) {
  return std::make_shared<Pooling2DLayer>(PoolKind::max, pool_size, std::move(options));
}
LayerRef AveragePooling2D(std::int64_t pool_size, Pooling2DOptions options) {
  return std::make_shared<Pooling2DLayer>(PoolKind::average, pool_size, std::move(options));
}
LayerRef GlobalAveragePooling2D(std::string name) {
  return std::make_shared<GlobalAveragePooling2DLayer>(std::move(name));
}

}  // namespace kerascpp::layers
