// ZeroPadding2D and UpSampling2D built from the Backend's concat/split/add (no op of their own):
// padding is a concatenation with zero blocks, nearest upsampling a concatenation of copies,
// bilinear upsampling (linear_upsampling.hpp) the Backend's upsample_linear op along each axis.
#include "kerascpp/layers/resizing.hpp"
#include "kerascpp/layer_config.hpp"

#include "check.hpp"
#include "layer_util.hpp"
#include "linear_upsampling.hpp"

namespace kerascpp::layers {
namespace {

// Concatenates zeros of `before` and `after` rows along `axis` around x.
Tensor pad_axis(Backend& be, const Tensor& x, int axis, std::int64_t before, std::int64_t after) {
  if (before == 0 && after == 0) return x;
  std::vector<Tensor> parts;
  auto zeros = [&](std::int64_t n) {
    Shape s = x.shape();
    s[static_cast<std::size_t>(axis)] = n;
    return Tensor::zeros(s, DType::float32, x.device());
  };
  if (before) parts.push_back(zeros(before));
  parts.push_back(x);
  if (after) parts.push_back(zeros(after));
  Shape out = x.shape();
  out[static_cast<std::size_t>(axis)] += before + after;
  Tensor y(out);
  be.concat(parts, axis, y);
  return y;
}

// The inverse: the middle part of dy along `axis`.
Tensor crop_axis(Backend& be, const Tensor& dy, int axis, std::int64_t before, std::int64_t after) {
  if (before == 0 && after == 0) return dy;
  std::vector<Tensor> parts;
  auto part = [&](std::int64_t n) {
    Shape s = dy.shape();
    s[static_cast<std::size_t>(axis)] = n;
    parts.emplace_back(s);
  };
  if (before) part(before);
  part(dy.dim(axis) - before - after);
  if (after) part(after);
  be.split(dy, axis, parts);
  return parts[before ? 1 : 0];
}

// Nearest upsampling along one axis of x (N, H, W, C): a copy of each slice `times` times in a row.
// Viewed as (..., n, 1, rest) the copies are a concatenation along the new axis of size 1.
Tensor repeat_axis(Backend& be, const Tensor& x, int axis, std::int64_t times) {
  if (times == 1) return x;
  Shape view = x.shape();
  view.insert(view.begin() + axis + 1, 1);
  Tensor v = x.reshape(view);
  Shape out = view;
  out[static_cast<std::size_t>(axis) + 1] = times;
  Tensor y(out);
  be.concat(std::vector<Tensor>(static_cast<std::size_t>(times), v), axis + 1, y);
  Shape merged = x.shape();
  merged[static_cast<std::size_t>(axis)] *= times;
  return y.reshape(merged);
}

// Its gradient: the sum of the `times` copies' gradients.
Tensor repeat_axis_backward(Backend& be, const Tensor& dy, int axis, std::int64_t times) {
  if (times == 1) return dy;
  Shape view = dy.shape();
  view[static_cast<std::size_t>(axis)] /= times;
  view.insert(view.begin() + axis + 1, times);
  Shape part_shape = view;
  part_shape[static_cast<std::size_t>(axis) + 1] = 1;
  std::vector<Tensor> parts(static_cast<std::size_t>(times), Tensor());
  for (auto& p : parts) p = Tensor(part_shape);
  be.split(dy.reshape(view), axis + 1, parts);
  Shape in = view;
  in.erase(in.begin() + axis + 1);
  for (auto& p : parts) p = p.reshape(in);  // drop the size-1 axis: a view
  Tensor dx(in);
  be.add(parts, dx);
  return dx;
}

}  // namespace

ZeroPadding2DLayer::ZeroPadding2DLayer(Padding2D p, ZeroPadding2DOptions options)
    : Layer(std::move(options.name)), padding_(p) {
  KERASCPP_CHECK(p.top >= 0 && p.bottom >= 0 && p.left >= 0 && p.right >= 0, ValueError,
                 "ZeroPadding2D '{}': padding must be >= 0, got top {}, bottom {}, left {}, right {}", name(), p.top,
                 p.bottom, p.left, p.right);
  set_input_spec(detail::nhwc_image_spec());
}

std::vector<Shape> ZeroPadding2DLayer::compute_output_shapes(const std::vector<Shape>& in) {
  Shape s = in[0];
  s[0] += padding_.top + padding_.bottom;
  s[1] += padding_.left + padding_.right;
  return {s};
}

std::vector<Tensor> ZeroPadding2DLayer::forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState&) {
  Tensor rows = pad_axis(*ctx.backend, in[0], 1, padding_.top, padding_.bottom);
  return {pad_axis(*ctx.backend, rows, 2, padding_.left, padding_.right)};
}

std::vector<Tensor> ZeroPadding2DLayer::backward(ReplicaContext& ctx, const std::vector<Tensor>&,
                                                 const std::vector<Tensor>&, const std::vector<Tensor>& grads,
                                                 LayerState&) {
  Tensor cols = crop_axis(*ctx.backend, grads[0], 2, padding_.left, padding_.right);
  return {crop_axis(*ctx.backend, cols, 1, padding_.top, padding_.bottom)};
}

Json ZeroPadding2DLayer::get_config() const {
  const nlohmann::json padding = {{padding_.top, padding_.bottom}, {padding_.left, padding_.right}};
  return detail::Json({{"name", name()}, {"padding", padding}, {"data_format", "channels_last"}});
}

UpSampling2DLayer::UpSampling2DLayer(Size2D size, UpSampling2DOptions options)
    : Layer(std::move(options.name)), size_(size), interpolation_(options.interpolation) {
  KERASCPP_CHECK(size.positive(), ValueError, "UpSampling2D '{}': size must be >= 1, got ({}, {})", name(), size.height,
                 size.width);
  KERASCPP_CHECK(interpolation_ == "nearest" || interpolation_ == "bilinear", ValueError,
                 "UpSampling2D '{}': interpolation '{}' is not supported; use \"nearest\" or \"bilinear\"", name(),
                 interpolation_);
  set_input_spec(detail::nhwc_image_spec());
}

std::vector<Shape> UpSampling2DLayer::compute_output_shapes(const std::vector<Shape>& in) {
  Shape s = in[0];
  s[0] *= size_.height;
  s[1] *= size_.width;
  return {s};
}

std::vector<Tensor> UpSampling2DLayer::forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState&) {
  if (interpolation_ == "bilinear") {
    Tensor rows = kerascpp::detail::linear_upsample_axis(*ctx.backend, in[0], 1, size_.height);
    return {kerascpp::detail::linear_upsample_axis(*ctx.backend, rows, 2, size_.width)};
  }
  return {repeat_axis(*ctx.backend, repeat_axis(*ctx.backend, in[0], 1, size_.height), 2, size_.width)};
}

std::vector<Tensor> UpSampling2DLayer::backward(ReplicaContext& ctx, const std::vector<Tensor>&,
                                                const std::vector<Tensor>&, const std::vector<Tensor>& grads,
                                                LayerState&) {
  if (interpolation_ == "bilinear") {
    Tensor cols = kerascpp::detail::linear_upsample_axis_backward(*ctx.backend, grads[0], 2, size_.width);
    return {kerascpp::detail::linear_upsample_axis_backward(*ctx.backend, cols, 1, size_.height)};
  }
  Tensor cols = repeat_axis_backward(*ctx.backend, grads[0], 2, size_.width);
  return {repeat_axis_backward(*ctx.backend, cols, 1, size_.height)};
}

Json UpSampling2DLayer::get_config() const {
  return detail::Json({{"name", name()},
                       {"size", detail::json_size2d(size_)},
                       {"data_format", "channels_last"},
                       {"interpolation", interpolation_}});
}

LayerRef ZeroPadding2D(Padding2D padding, ZeroPadding2DOptions options) {
  return std::make_shared<ZeroPadding2DLayer>(padding, std::move(options));
}
LayerRef UpSampling2D(Size2D size, UpSampling2DOptions options) {
  return std::make_shared<UpSampling2DLayer>(size, std::move(options));
}

KERASCPP_REGISTER_LAYER("ZeroPadding2D", [](const LayerConfig& c) {
  c.expect_channels_last();
  const Json* p = c.find("padding");
  layers::Padding2D pad;
  if (p && p->is_number_integer()) pad = layers::Padding2D(p->get<std::int64_t>());
  else if (p && p->is_array() && p->size() == 2 && (*p)[0].is_array())
    pad = layers::Padding2D((*p)[0][0].get<std::int64_t>(), (*p)[0][1].get<std::int64_t>(),
                            (*p)[1][0].get<std::int64_t>(), (*p)[1][1].get<std::int64_t>());
  else if (p && p->is_array() && p->size() == 2)
    pad = layers::Padding2D((*p)[0].get<std::int64_t>(), (*p)[1].get<std::int64_t>());
  else if (p) c.fail("'padding' is " + p->dump() + ", not an integer, a pair or a pair of pairs");
  return layers::ZeroPadding2D(pad, {.name = c.name()});
});
KERASCPP_REGISTER_LAYER("UpSampling2D", [](const LayerConfig& c) {
  c.expect_channels_last();
  return layers::UpSampling2D(c.size2d("size", 2),
                              {.interpolation = c.str("interpolation", "nearest"), .name = c.name()});
});

}  // namespace kerascpp::layers
