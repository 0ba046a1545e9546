// UpSampling1D/2D/3D: nearest upsampling repeats slices along each spatial axis (axis_blocks.hpp);
// UpSampling2D's bilinear mode (linear_upsampling.hpp) runs the Backend's upsample_linear op
// along each axis.
#include "kerascpp/core/layer_config.hpp"
#include "kerascpp/layers/resizing.hpp"

#include <fmt/ranges.h>

#include <algorithm>

#include "axis_blocks.hpp"
#include "check.hpp"
#include "layer_util.hpp"
#include "linear_upsampling.hpp"

namespace kerascpp::layers {

UpSamplingLayer::UpSamplingLayer(std::vector<std::int64_t> size, UpSamplingOptions options)
    : Layer(std::move(options.name)), size_(std::move(size)), interpolation_(std::move(options.interpolation)) {
  KERASCPP_CHECK_VALUE(!size_.empty() && size_.size() <= 3, "UpSampling '{}': 1 to 3 spatial axes, got {}", name(),
                       size_.size());
  KERASCPP_CHECK_VALUE(std::all_of(size_.begin(), size_.end(), [](std::int64_t s) { return s >= 1; }),
                       "{} '{}': size must be >= 1 on every axis, got ({})", class_name(), name(),
                       fmt::join(size_, ", "));
  KERASCPP_CHECK_VALUE(interpolation_ == "nearest" || (interpolation_ == "bilinear" && size_.size() == 2),
                       "{} '{}': interpolation '{}' is not supported; use {}", class_name(), name(), interpolation_,
                       size_.size() == 2 ? "\"nearest\" or \"bilinear\"" : "\"nearest\" (the only one it has)");
  set_input_spec(detail::spatial_spec(size_.size()));
}

std::vector<Shape> UpSamplingLayer::compute_output_shapes(const std::vector<Shape>& in) {
  Shape s = in[0];
  for (std::size_t i = 0; i < size_.size(); ++i)
    if (s[i] >= 0) s[i] *= size_[i];
  return {s};
}

std::vector<Tensor> UpSamplingLayer::forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState&) {
  Tensor y = in[0];
  for (std::size_t i = 0; i < size_.size(); ++i) {
    const int axis = static_cast<int>(i) + 1;
    y = interpolation_ == "bilinear" ? detail::linear_upsample_axis(*ctx.backend, y, axis, size_[i])
                                     : detail::repeat_axis(*ctx.backend, y, axis, size_[i]);
  }
  return {y};
}

std::vector<Tensor> UpSamplingLayer::backward(ReplicaContext& ctx, const std::vector<Tensor>&,
                                              const std::vector<Tensor>&, const std::vector<Tensor>& grads,
                                              LayerState&) {
  Tensor dx = grads[0];
  for (std::size_t i = size_.size(); i-- > 0;) {
    const int axis = static_cast<int>(i) + 1;
    dx = interpolation_ == "bilinear" ? detail::linear_upsample_axis_backward(*ctx.backend, dx, axis, size_[i])
                                      : detail::repeat_axis_backward(*ctx.backend, dx, axis, size_[i]);
  }
  return {dx};
}

Json UpSamplingLayer::get_config() const {
  if (size_.size() == 1) return detail::Json({{"name", name()}, {"size", size_[0]}});  // Keras' UpSampling1D
  detail::Json config({{"name", name()}, {"size", size_}, {"data_format", "channels_last"}});
  if (size_.size() == 2) config["interpolation"] = interpolation_;
  return config;
}

LayerRef UpSampling1D(std::int64_t size, UpSamplingOptions options) {
  return std::make_shared<UpSamplingLayer>(std::vector<std::int64_t>{size}, std::move(options));
}
LayerRef UpSampling2D(Size2D size, UpSampling2DOptions options) {
  return std::make_shared<UpSamplingLayer>(std::vector<std::int64_t>{size.height, size.width}, std::move(options));
}
LayerRef UpSampling3D(Size3D size, UpSamplingOptions options) {
  return std::make_shared<UpSamplingLayer>(std::vector<std::int64_t>{size.depth, size.height, size.width},
                                           std::move(options));
}

namespace {
// Keras' size: an int (every axis) or one int per axis; 2 by default.
std::vector<std::int64_t> read_size(const LayerConfig& c, std::size_t n) {
  if (n == 1) return {c.size1d("size", 2)};
  if (n == 2) {
    const Size2D s = c.size2d("size", 2);
    return {s.height, s.width};
  }
  const Size3D s = c.size3d("size", 2);
  return {s.depth, s.height, s.width};
}
}  // namespace

KERASCPP_REGISTER_LAYER("UpSampling1D", [](const LayerConfig& c) {
  return LayerRef(std::make_shared<UpSamplingLayer>(read_size(c, 1), UpSamplingOptions{.name = c.name()}));
});
KERASCPP_REGISTER_LAYER("UpSampling2D", [](const LayerConfig& c) {
  c.expect_channels_last();
  return LayerRef(std::make_shared<UpSamplingLayer>(
      read_size(c, 2), UpSamplingOptions{.interpolation = c.str("interpolation", "nearest"), .name = c.name()}));
});
KERASCPP_REGISTER_LAYER("UpSampling3D", [](const LayerConfig& c) {
  c.expect_channels_last();
  return LayerRef(std::make_shared<UpSamplingLayer>(read_size(c, 3), UpSamplingOptions{.name = c.name()}));
});

}  // namespace kerascpp::layers
