// CenterCrop: the central window of each image, cut with crop_axis (axis_blocks.hpp) along height
// and width; its gradient pads the window back with zeros.
#include "kerascpp/layers/center_crop.hpp"

#include "axis_blocks.hpp"
#include "check.hpp"
#include "kerascpp/core/layer_config.hpp"
#include "layer_util.hpp"

namespace kerascpp::layers {
namespace {

// Slices cut before and after along one axis: Keras' start (size - target) // 2, rest after.
std::pair<std::int64_t, std::int64_t> cut(std::int64_t size, std::int64_t target) {
  const std::int64_t before = (size - target) / 2;
  return {before, size - target - before};
}

}  // namespace

CenterCropLayer::CenterCropLayer(std::int64_t height, std::int64_t width, CenterCropOptions options)
    : Layer(std::move(options.name)), height_(height), width_(width) {
  KERASCPP_CHECK_VALUE(height_ >= 1 && width_ >= 1, "CenterCrop '{}': height and width must be >= 1, got {} x {}",
                       name(), height_, width_);
  set_input_spec(detail::nhwc_image_spec());
}

std::vector<Shape> CenterCropLayer::compute_output_shapes(const std::vector<Shape>& in) {
  const Shape& s = in[0];
  KERASCPP_CHECK_SHAPE((s[0] < 0 || s[0] >= height_) && (s[1] < 0 || s[1] >= width_),
                       "{}: the input images {} are smaller than the {} x {} crop; Keras would resize them up, "
                       "which this layer does not: add a Resizing step or crop to at most the image size",
                       where(), shape_str(detail::with_batch(-1, s)), height_, width_);
  return {Shape{height_, width_, s[2]}};
}

std::vector<Tensor> CenterCropLayer::forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState&) {
  KERASCPP_CHECK_SHAPE(in[0].dim(1) >= height_ && in[0].dim(2) >= width_,
                       "{}: the images {} are smaller than the {} x {} crop", where(), shape_str(in[0].shape()),
                       height_, width_);
  const auto [top, bottom] = cut(in[0].dim(1), height_);
  const auto [left, right] = cut(in[0].dim(2), width_);
  Tensor y = detail::crop_axis(*ctx.backend, in[0], 1, top, bottom);
  return {detail::crop_axis(*ctx.backend, y, 2, left, right)};
}

std::vector<Tensor> CenterCropLayer::backward(ReplicaContext& ctx, const std::vector<Tensor>& in,
                                              const std::vector<Tensor>&, const std::vector<Tensor>& grads,
                                              LayerState&) {
  const auto [top, bottom] = cut(in[0].dim(1), height_);
  const auto [left, right] = cut(in[0].dim(2), width_);
  Tensor dx = detail::pad_axis(*ctx.backend, grads[0], 2, left, right);
  return {detail::pad_axis(*ctx.backend, dx, 1, top, bottom)};
}

Json CenterCropLayer::get_config() const {
  return detail::Json({{"name", name()}, {"height", height_}, {"width", width_}, {"data_format", "channels_last"}});
}

LayerRef CenterCrop(std::int64_t height, std::int64_t width, CenterCropOptions options) {
  return std::make_shared<CenterCropLayer>(height, width, std::move(options));
}

KERASCPP_REGISTER_LAYER("CenterCrop", [](const LayerConfig& c) {
  c.expect_channels_last();
  return layers::CenterCrop(c.required<std::int64_t>("height"), c.required<std::int64_t>("width"), {.name = c.name()});
});

}  // namespace kerascpp::layers
