// Resizing: bilinear and nearest resizing is linear in the pixels and separable, so each axis is
// one matmul with the interpolation matrix resize_window uses (data/image_resize.hpp), on the
// Backend: rows first, then columns (TensorFlow's order); the gradient is the same two matmuls
// with the matrices transposed. No resize op of the Backend is needed for any size.
#include "kerascpp/layers/image_resizing.hpp"

#include "check.hpp"
#include "data/image_resize.hpp"
#include "kerascpp/core/layer_config.hpp"
#include "kerascpp/data/images.hpp"
#include "layer_util.hpp"

namespace kerascpp::layers {
namespace {

using data::image_detail::Interpolation;

// y = matrix [out, in] applied along `axis` (1: height, 2: width) of x (N, H, W, C); with
// `transposed`, the matrix's transpose [in, out] (the gradient).
Tensor apply_along(Backend& be, const Tensor& x, int axis, const Tensor& matrix, bool transposed) {
  // The axis first, the rest flattened: (A, rest) = transpose, then one matmul, then back.
  const std::vector<int> to_front = axis == 1 ? std::vector<int>{1, 0, 2, 3} : std::vector<int>{2, 0, 1, 3};
  const std::vector<int> back = axis == 1 ? std::vector<int>{1, 0, 2, 3} : std::vector<int>{1, 2, 0, 3};
  Shape front_shape;
  for (int a : to_front) front_shape.push_back(x.dim(a));
  Tensor front(front_shape, DType::float32, x.device());
  be.transpose(x, to_front, front);
  const std::int64_t rest = x.numel() / x.dim(axis);
  const std::int64_t out = transposed ? matrix.dim(1) : matrix.dim(0);
  Tensor mixed({out, rest}, DType::float32, x.device());
  be.matmul(matrix, transposed, front.reshape({x.dim(axis), rest}), false, mixed, false);
  Shape mixed_shape = front_shape;
  mixed_shape[0] = out;
  Shape y_shape;
  for (int a : back) y_shape.push_back(mixed_shape[static_cast<std::size_t>(a)]);
  Tensor y(y_shape, DType::float32, x.device());
  be.transpose(mixed.reshape(mixed_shape), back, y);
  return y;
}

// The two interpolation matrices for an h x w input, on `device`.
std::pair<Tensor, Tensor> matrices(std::int64_t h, std::int64_t w, std::int64_t height, std::int64_t width,
                                   const ResizingOptions& o, Device device) {
  const Interpolation method = data::image_detail::parse_interpolation(o.interpolation, "Resizing");
  std::array<std::int64_t, 4> box{0, 0, h, w};
  if (o.crop_to_aspect_ratio) box = data::aspect_ratio_crop_box(h, w, {height, width});
  const auto rows = data::image_detail::resize_matrix(h, box[0], box[2], height, method);
  const auto cols = data::image_detail::resize_matrix(w, box[1], box[3], width, method);
  return {Tensor::from_vector({height, h}, rows).to(device), Tensor::from_vector({width, w}, cols).to(device)};
}

}  // namespace

ResizingLayer::ResizingLayer(std::int64_t height, std::int64_t width, ResizingOptions options)
    : Layer(options.name), height_(height), width_(width), options_(std::move(options)) {
  KERASCPP_CHECK_VALUE(height_ >= 1 && width_ >= 1, "Resizing '{}': height and width must be >= 1, got {} x {}", name(),
                       height_, width_);
  (void)data::image_detail::parse_interpolation(options_.interpolation, "Resizing");
  set_input_spec(detail::nhwc_image_spec());
}

std::vector<Shape> ResizingLayer::compute_output_shapes(const std::vector<Shape>& in) {
  return {Shape{height_, width_, in[0][2]}};
}

std::vector<Tensor> ResizingLayer::forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState&) {
  const Tensor& x = in[0];
  if (x.dim(0) == 0) return {Tensor({0, height_, width_, x.dim(3)}, DType::float32, x.device())};
  const auto [rows, cols] = matrices(x.dim(1), x.dim(2), height_, width_, options_, ctx.backend->device());
  return {apply_along(*ctx.backend, apply_along(*ctx.backend, x, 1, rows, false), 2, cols, false)};
}

std::vector<Tensor> ResizingLayer::backward(ReplicaContext& ctx, const std::vector<Tensor>& in,
                                            const std::vector<Tensor>&, const std::vector<Tensor>& grads, LayerState&) {
  const Tensor& x = in[0];
  if (x.dim(0) == 0) return {Tensor(x.shape(), DType::float32, x.device())};
  const auto [rows, cols] = matrices(x.dim(1), x.dim(2), height_, width_, options_, ctx.backend->device());
  return {apply_along(*ctx.backend, apply_along(*ctx.backend, grads[0], 2, cols, true), 1, rows, true)};
}

Json ResizingLayer::get_config() const {
  return detail::Json({{"name", name()},
                       {"height", height_},
                       {"width", width_},
                       {"interpolation", options_.interpolation},
                       {"crop_to_aspect_ratio", options_.crop_to_aspect_ratio},
                       {"pad_to_aspect_ratio", false},
                       {"fill_mode", "constant"},
                       {"fill_value", 0.0},
                       {"antialias", false},
                       {"data_format", "channels_last"}});
}

LayerRef Resizing(std::int64_t height, std::int64_t width, ResizingOptions options) {
  return std::make_shared<ResizingLayer>(height, width, std::move(options));
}

KERASCPP_REGISTER_LAYER("Resizing", [](const LayerConfig& c) {
  c.expect_channels_last();
  c.expect("pad_to_aspect_ratio", false, "the image resized whole or cropped, never padded");
  c.expect("antialias", false, "no antialiasing filter");
  return layers::Resizing(c.required<std::int64_t>("height"), c.required<std::int64_t>("width"),
                          {.interpolation = c.str("interpolation", "bilinear"),
                           .crop_to_aspect_ratio = c.get<bool>("crop_to_aspect_ratio", false),
                           .name = c.name()});
});

}  // namespace kerascpp::layers
