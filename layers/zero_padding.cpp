// ZeroPadding1D/2D/3D and Cropping1D/2D/3D: one class, as cropping is padding's inverse (each
// one's backward is the other's forward), built from axis_blocks.hpp.
#include "kerascpp/core/layer_config.hpp"
#include "kerascpp/layers/resizing.hpp"

#include "axis_blocks.hpp"
#include "check.hpp"
#include "layer_util.hpp"

namespace kerascpp::layers {

ZeroPaddingLayer::ZeroPaddingLayer(std::vector<AxisPadding> amounts, bool pad, std::string name)
    : Layer(std::move(name)), amounts_(std::move(amounts)), pad_(pad) {
  KERASCPP_CHECK_VALUE(!amounts_.empty() && amounts_.size() <= 3, "{} '{}': 1 to 3 spatial axes, got {}",
                       pad_ ? "ZeroPadding" : "Cropping", Layer::name(), amounts_.size());
  for (const AxisPadding& a : amounts_)
    KERASCPP_CHECK_VALUE(a.before >= 0 && a.after >= 0, "{} '{}': {} must be >= 0, got ({}, {})", class_name(),
                         Layer::name(), pad_ ? "padding" : "cropping", a.before, a.after);
  set_input_spec(detail::spatial_spec(amounts_.size()));
}

std::string ZeroPaddingLayer::class_name() const {
  return (pad_ ? "ZeroPadding" : "Cropping") + std::to_string(amounts_.size()) + "D";
}

std::vector<Shape> ZeroPaddingLayer::compute_output_shapes(const std::vector<Shape>& in) {
  Shape s = in[0];
  for (std::size_t i = 0; i < amounts_.size(); ++i) {
    const std::int64_t change = amounts_[i].before + amounts_[i].after;
    KERASCPP_CHECK_SHAPE(pad_ || s[i] < 0 || s[i] > change,
                         "{}: cropping ({}, {}) leaves nothing of spatial axis {} (size {}) of the input {}", where(),
                         amounts_[i].before, amounts_[i].after, i + 1, s[i], shape_str(detail::with_batch(-1, in[0])));
    if (s[i] >= 0) s[i] += pad_ ? change : -change;
  }
  return {s};
}

std::vector<Tensor> ZeroPaddingLayer::forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState&) {
  Tensor y = in[0];
  for (std::size_t i = 0; i < amounts_.size(); ++i) {
    const int axis = static_cast<int>(i) + 1;
    y = pad_ ? detail::pad_axis(*ctx.backend, y, axis, amounts_[i].before, amounts_[i].after)
             : detail::crop_axis(*ctx.backend, y, axis, amounts_[i].before, amounts_[i].after);
  }
  return {y};
}

std::vector<Tensor> ZeroPaddingLayer::backward(ReplicaContext& ctx, const std::vector<Tensor>&,
                                               const std::vector<Tensor>&, const std::vector<Tensor>& grads,
                                               LayerState&) {
  Tensor dx = grads[0];
  for (std::size_t i = amounts_.size(); i-- > 0;) {
    const int axis = static_cast<int>(i) + 1;
    dx = pad_ ? detail::crop_axis(*ctx.backend, dx, axis, amounts_[i].before, amounts_[i].after)
              : detail::pad_axis(*ctx.backend, dx, axis, amounts_[i].before, amounts_[i].after);
  }
  return {dx};
}

Json ZeroPaddingLayer::get_config() const {
  const char* key = pad_ ? "padding" : "cropping";
  if (amounts_.size() == 1)  // Keras' Cropping1D has no data_format; ZeroPadding1D has one
    return pad_ ? detail::Json({{"name", name()},
                                {key, {amounts_[0].before, amounts_[0].after}},
                                {"data_format", "channels_last"}})
                : detail::Json({{"name", name()}, {key, {amounts_[0].before, amounts_[0].after}}});
  nlohmann::json pairs = nlohmann::json::array();
  for (const AxisPadding& a : amounts_) pairs.push_back({a.before, a.after});
  return detail::Json({{"name", name()}, {key, pairs}, {"data_format", "channels_last"}});
}

namespace {

std::vector<AxisPadding> amounts_2d(const Padding2D& p) { return {{p.top, p.bottom}, {p.left, p.right}}; }
std::vector<AxisPadding> amounts_3d(const Padding3D& p) { return {p.depth, p.height, p.width}; }

// Keras' padding/cropping argument of a config with `n` spatial axes: an int (every side), n ints
// (each axis symmetric; for n = 1 a pair is (before, after)), or n pairs.
std::vector<AxisPadding> read_amounts(const LayerConfig& c, const char* key, std::size_t n, std::int64_t fallback) {
  const Json* p = c.find(key);
  auto integer = [&](const Json& v) {
    if (!v.is_number_integer()) c.fail(fmt::format("'{}' is {}: expected integers", key, p->dump()));
    return v.get<std::int64_t>();
  };
  if (!p) return std::vector<AxisPadding>(n, AxisPadding(fallback));
  if (p->is_number_integer()) return std::vector<AxisPadding>(n, AxisPadding(integer(*p)));
  if (n == 1 && p->is_array() && p->size() == 2 && !(*p)[0].is_array())
    return {AxisPadding(integer((*p)[0]), integer((*p)[1]))};
  std::vector<AxisPadding> out;
  if (p->is_array() && p->size() == n)
    for (const Json& axis : *p) {
      if (axis.is_array() && axis.size() == 2) out.emplace_back(integer(axis[0]), integer(axis[1]));
      else if (!axis.is_array()) out.emplace_back(integer(axis));
    }
  if (out.size() != n)
    c.fail(fmt::format("'{}' is {}, not an integer, {} integers or {} pairs of integers", key, p->dump(), n, n));
  return out;
}

// The factory of one of the six classes: `n` spatial axes, padding or cropping.
template <std::size_t N, bool Pad>
LayerRef from_config(const LayerConfig& c) {
  if (N > 1 || Pad) c.expect_channels_last();
  const std::int64_t fallback = Pad || N != 2 ? 1 : 0;  // Keras' Cropping2D crops nothing by default
  return std::make_shared<ZeroPaddingLayer>(read_amounts(c, Pad ? "padding" : "cropping", N, fallback), Pad, c.name());
}

}  // namespace

LayerRef ZeroPadding1D(AxisPadding padding, ZeroPaddingOptions options) {
  return std::make_shared<ZeroPaddingLayer>(std::vector<AxisPadding>{padding}, true, std::move(options.name));
}
LayerRef ZeroPadding2D(Padding2D padding, ZeroPadding2DOptions options) {
  return std::make_shared<ZeroPaddingLayer>(amounts_2d(padding), true, std::move(options.name));
}
LayerRef ZeroPadding3D(Padding3D padding, ZeroPaddingOptions options) {
  return std::make_shared<ZeroPaddingLayer>(amounts_3d(padding), true, std::move(options.name));
}
LayerRef Cropping1D(AxisPadding cropping, CroppingOptions options) {
  return std::make_shared<ZeroPaddingLayer>(std::vector<AxisPadding>{cropping}, false, std::move(options.name));
}
LayerRef Cropping2D(Padding2D cropping, CroppingOptions options) {
  return std::make_shared<ZeroPaddingLayer>(amounts_2d(cropping), false, std::move(options.name));
}
LayerRef Cropping3D(Padding3D cropping, CroppingOptions options) {
  return std::make_shared<ZeroPaddingLayer>(amounts_3d(cropping), false, std::move(options.name));
}

KERASCPP_REGISTER_LAYER("ZeroPadding1D", (from_config<1, true>));
KERASCPP_REGISTER_LAYER("ZeroPadding2D", (from_config<2, true>));
KERASCPP_REGISTER_LAYER("ZeroPadding3D", (from_config<3, true>));
KERASCPP_REGISTER_LAYER("Cropping1D", (from_config<1, false>));
KERASCPP_REGISTER_LAYER("Cropping2D", (from_config<2, false>));
KERASCPP_REGISTER_LAYER("Cropping3D", (from_config<3, false>));

}  // namespace kerascpp::layers
