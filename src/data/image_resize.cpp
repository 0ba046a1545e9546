// resize_image and Keras' aspect-ratio crop. The Backend's resize (upsample_linear) scales by an
// integer factor only, for UpSampling2D; image pipelines need any size, on uint8 input, one image
// per call on the pipeline's thread, so this is a plain loop over the output pixels.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "check.hpp"
#include "data/image_resize.hpp"
#include "kerascpp/data/images.hpp"
#include "kerascpp/error.hpp"

namespace kerascpp::data {
namespace image_detail {
namespace {

// One output coordinate's two source indices and the weight of the second, as TensorFlow's
// resize kernels compute them in float (scale = in / out).
struct Taps {
  std::int64_t lo, hi;
  float frac;
};

std::vector<Taps> linear_taps(std::int64_t in, std::int64_t out) {
  std::vector<Taps> taps(static_cast<std::size_t>(out));
  const float scale = static_cast<float>(in) / static_cast<float>(out);
  for (std::int64_t o = 0; o < out; ++o) {
    const float sample = (static_cast<float>(o) + 0.5f) * scale - 0.5f;
    const float below = std::floor(sample);
    const auto lo = static_cast<std::int64_t>(below);
    taps[static_cast<std::size_t>(o)] = {std::clamp<std::int64_t>(lo, 0, in - 1),
                                         std::clamp<std::int64_t>(lo + 1, 0, in - 1), sample - below};
  }
  return taps;
}

std::vector<std::int64_t> nearest_taps(std::int64_t in, std::int64_t out) {
  std::vector<std::int64_t> taps(static_cast<std::size_t>(out));
  const float scale = static_cast<float>(in) / static_cast<float>(out);
  for (std::int64_t o = 0; o < out; ++o)
    taps[static_cast<std::size_t>(o)] =
        std::min<std::int64_t>(static_cast<std::int64_t>(std::floor((static_cast<float>(o) + 0.5f) * scale)), in - 1);
  return taps;
}

}  // namespace

Interpolation parse_interpolation(const std::string& name, const char* op) {
  if (name == "bilinear") return Interpolation::bilinear;
  if (name == "nearest") return Interpolation::nearest;
  throw ValueError(
      fmt::format("{}: interpolation must be \"bilinear\" or \"nearest\", got \"{}\" (Keras' bicubic, "
                  "area, lanczos3, lanczos5, gaussian and mitchellcubic are not supported yet)",
                  op, name));
}

template <class T>
void resize_window(const T* image, std::int64_t width, std::int64_t channels, std::array<std::int64_t, 4> box,
                   std::int64_t out_h, std::int64_t out_w, Interpolation method, float* out) {
  // Plain variables, not a structured binding: the lambda below captures them, which clang 14
  // (the fuzz build's compiler) does not allow for bindings.
  const std::int64_t top = box[0], left = box[1], rows = box[2], cols = box[3];
  const auto pixel = [&](std::int64_t y, std::int64_t x) { return image + ((top + y) * width + left + x) * channels; };
  if (method == Interpolation::nearest) {
    const auto ys = nearest_taps(rows, out_h), xs = nearest_taps(cols, out_w);
    for (std::int64_t y = 0; y < out_h; ++y)
      for (std::int64_t x = 0; x < out_w; ++x) {
        const T* p = pixel(ys[static_cast<std::size_t>(y)], xs[static_cast<std::size_t>(x)]);
        for (std::int64_t c = 0; c < channels; ++c) *out++ = static_cast<float>(p[c]);
      }
    return;
  }
  const auto ys = linear_taps(rows, out_h), xs = linear_taps(cols, out_w);
  for (const Taps& ty : ys)
    for (const Taps& tx : xs) {
      const T *tl = pixel(ty.lo, tx.lo), *tr = pixel(ty.lo, tx.hi), *bl = pixel(ty.hi, tx.lo),
              *br = pixel(ty.hi, tx.hi);
      for (std::int64_t c = 0; c < channels; ++c) {
        // TensorFlow's order of operations: along the row, then between the rows.
        const float t = static_cast<float>(tl[c]) + (static_cast<float>(tr[c]) - static_cast<float>(tl[c])) * tx.frac;
        const float b = static_cast<float>(bl[c]) + (static_cast<float>(br[c]) - static_cast<float>(bl[c])) * tx.frac;
        *out++ = t + (b - t) * ty.frac;
      }
    }
}

std::vector<float> resize_matrix(std::int64_t in, std::int64_t begin, std::int64_t size, std::int64_t out,
                                 Interpolation method) {
  std::vector<float> m(static_cast<std::size_t>(out * in), 0.f);
  const auto at = [&](std::int64_t o, std::int64_t i) -> float& {
    return m[static_cast<std::size_t>(o * in + begin + i)];
  };
  if (method == Interpolation::nearest) {
    const auto taps = nearest_taps(size, out);
    for (std::int64_t o = 0; o < out; ++o) at(o, taps[static_cast<std::size_t>(o)]) = 1.f;
    return m;
  }
  const auto taps = linear_taps(size, out);
  for (std::int64_t o = 0; o < out; ++o) {
    const Taps& t = taps[static_cast<std::size_t>(o)];
    at(o, t.lo) += 1.f - t.frac;
    at(o, t.hi) += t.frac;
  }
  return m;
}

template void resize_window<std::uint8_t>(const std::uint8_t*, std::int64_t, std::int64_t, std::array<std::int64_t, 4>,
                                          std::int64_t, std::int64_t, Interpolation, float*);
template void resize_window<float>(const float*, std::int64_t, std::int64_t, std::array<std::int64_t, 4>, std::int64_t,
                                   std::int64_t, Interpolation, float*);

}  // namespace image_detail

Tensor resize_image(const Tensor& images, std::array<std::int64_t, 2> size, const std::string& interpolation) {
  constexpr const char* kImageResizeOp = "resize_image";
  const image_detail::Interpolation method = image_detail::parse_interpolation(interpolation, kImageResizeOp);
  const bool batched = images.rank() == 4;
  KERASCPP_CHECK_SHAPE(
      (images.rank() == 3 || batched) && (images.dtype() == DType::uint8 || images.dtype() == DType::float32),
      "{}: expected uint8 or float32 images (height, width, channels) or (batch, height, "
      "width, channels), got {} of shape {}",
      kImageResizeOp, dtype_name(images.dtype()), shape_str(images.shape()));
  KERASCPP_CHECK_VALUE(size[0] > 0 && size[1] > 0, "{}: size must be positive, got ({}, {})", kImageResizeOp, size[0],
                       size[1]);
  const Tensor host = images.to(Device{});
  const std::int64_t n = batched ? host.dim(0) : 1, h = host.dim(-3), w = host.dim(-2), c = host.dim(-1);
  KERASCPP_CHECK_SHAPE(h > 0 && w > 0, "{}: cannot resize an empty image of shape {}", kImageResizeOp,
                       shape_str(host.shape()));
  Shape out_shape{size[0], size[1], c};
  if (batched) out_shape.insert(out_shape.begin(), n);
  Tensor out(out_shape, DType::float32, Device{});
  const std::int64_t in_step = h * w * c, out_step = size[0] * size[1] * c;
  for (std::int64_t i = 0; i < n; ++i) {
    float* dst = out.data<float>() + i * out_step;
    if (host.dtype() == DType::uint8)
      image_detail::resize_window(static_cast<const std::uint8_t*>(host.raw()) + i * in_step, w, c, {0, 0, h, w},
                                  size[0], size[1], method, dst);
    else
      image_detail::resize_window(host.data<float>() + i * in_step, w, c, {0, 0, h, w}, size[0], size[1], method, dst);
  }
  return out;
}

std::array<std::int64_t, 4> aspect_ratio_crop_box(std::int64_t height, std::int64_t width,
                                                  std::array<std::int64_t, 2> size) {
  // In float32, as Keras' smart_resize computes it inside a tf.data map (dynamic shapes).
  const auto crop_h = std::clamp<std::int64_t>(
      static_cast<std::int64_t>(static_cast<float>(width * size[0]) / static_cast<float>(size[1])), 1, height);
  const auto crop_w = std::clamp<std::int64_t>(
      static_cast<std::int64_t>(static_cast<float>(height * size[1]) / static_cast<float>(size[0])), 1, width);
  return {static_cast<std::int64_t>(static_cast<float>(height - crop_h) / 2.f),
          static_cast<std::int64_t>(static_cast<float>(width - crop_w) / 2.f), crop_h, crop_w};
}

std::array<std::int64_t, 4> aspect_ratio_pad_box(std::int64_t height, std::int64_t width,
                                                 std::array<std::int64_t, 2> size) {
  // In float32, as TensorFlow's resize_with_pad: scale by the larger ratio, floor the sides, and
  // centre with the floor of half the (fractional) slack.
  const float h = static_cast<float>(height), w = static_cast<float>(width);
  const float th = static_cast<float>(size[0]), tw = static_cast<float>(size[1]);
  const float ratio = std::max(w / tw, h / th);
  const float rh = h / ratio, rw = w / ratio;
  const auto pad = [](float slack) {
    return std::max<std::int64_t>(0, static_cast<std::int64_t>(std::floor(slack / 2.f)));
  };
  return {pad(th - rh), pad(tw - rw), std::max<std::int64_t>(1, static_cast<std::int64_t>(std::floor(rh))),
          std::max<std::int64_t>(1, static_cast<std::int64_t>(std::floor(rw)))};
}

}  // namespace kerascpp::data
