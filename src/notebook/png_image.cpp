// Image-shaped tensors as PNG bytes (for "image/png" display bundles and <img> data URLs), and
// base64. A minimal encoder: 8-bit grey or RGB, one IDAT chunk compressed by zlib, filter 0.
#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "check.hpp"
#include "kerascpp/notebook/display.hpp"

namespace kerascpp::notebook {
namespace {

void put_u32(std::string& out, std::uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>((v >> shift) & 0xff));
}

// A chunk: length, type, data, CRC-32 of type and data (zlib's crc32 is PNG's).
void put_chunk(std::string& out, const char type[4], const std::string& data) {
  put_u32(out, static_cast<std::uint32_t>(data.size()));
  std::string body(type, 4);
  body += data;
  out += body;
  const auto* bytes = reinterpret_cast<const Bytef*>(body.data());
  put_u32(out, static_cast<std::uint32_t>(crc32(0L, bytes, static_cast<uInt>(body.size()))));
}

struct ImageLayout {
  std::int64_t count = 1, height = 0, width = 0, channels = 1;
};

// (H, W), (H, W, 1|3), (N, H, W, 1): what is_image() accepts, or count 0 when not an image.
ImageLayout layout_of(const Shape& s) {
  ImageLayout l;
  if (s.size() == 2) {
    l.height = s[0];
    l.width = s[1];
  } else if (s.size() == 3 && (s[2] == 1 || s[2] == 3)) {
    l.height = s[0];
    l.width = s[1];
    l.channels = s[2];
  } else if (s.size() == 4 && s[3] == 1 && s[0] > 1) {
    l.count = s[0];
    l.height = s[1];
    l.width = s[2];
  } else {
    l.count = 0;
  }
  return l;
}

}  // namespace

bool is_image(const Tensor& tensor) {
  if (!tensor.defined() || (tensor.dtype() != DType::float32 && tensor.dtype() != DType::uint8)) return false;
  ImageLayout l = layout_of(tensor.shape());
  // Small enough to be worth drawing and large enough to be an image rather than a matrix of
  // numbers (a 10x10 confusion matrix or a 3x3 kernel reads better as a table); integer counts
  // are never pixels.
  return l.count > 0 && l.height >= 16 && l.width >= 16 && l.height <= 4096 && l.width * l.count <= 8192;
}

std::string tensor_png(const Tensor& image, int scale) {
  KERASCPP_CHECK_VALUE(is_image(image),
                       "tensor_png: shape {} is not an image; expected (H, W), (H, W, 1), (H, W, 3) or (N, H, W, 1) "
                       "with H, W >= 16, float32 or uint8",
                       shape_str(image.shape()));
  KERASCPP_CHECK_VALUE(scale >= 1 && scale <= 16, "tensor_png: scale must be in [1, 16], got {}", scale);
  const ImageLayout l = layout_of(image.shape());
  const std::vector<float> v = image.to_vector();
  // Pixel values: uint8 as is, [0, 1] times 255, anything else stretched from [min, max].
  float lo = 0, hi = 255;
  if (image.dtype() != DType::uint8 && !v.empty()) {
    auto [mn, mx] = std::minmax_element(v.begin(), v.end());
    if (*mn >= 0 && *mx <= 1) {
      hi = 1;
    } else {
      lo = *mn;
      hi = *mx > *mn ? *mx : *mn + 1;
    }
  }
  auto byte = [&](float x) {
    float t = (x - lo) / (hi - lo) * 255.0f + 0.5f;
    return static_cast<unsigned char>(std::clamp(t, 0.0f, 255.0f));
  };
  // N images side by side with a 1-pixel gap: one row of the PNG crosses all of them.
  const std::int64_t gap = l.count > 1 ? 1 : 0;
  const std::int64_t out_w = (l.width * l.count + gap * (l.count - 1)) * scale;
  const std::int64_t out_h = l.height * scale;
  const std::int64_t row_bytes = out_w * l.channels;
  std::string raw;
  raw.reserve(static_cast<std::size_t>((row_bytes + 1) * out_h));
  for (std::int64_t y = 0; y < out_h; ++y) {
    raw.push_back(0);  // filter type 0 (none) for every scanline
    const std::int64_t sy = y / scale;
    for (std::int64_t n = 0; n < l.count; ++n) {
      if (n > 0)
        for (std::int64_t g = 0; g < gap * scale * l.channels; ++g) raw.push_back(static_cast<char>(255));
      for (std::int64_t x = 0; x < l.width * scale; ++x) {
        const std::int64_t sx = x / scale;
        const std::int64_t base = ((n * l.height + sy) * l.width + sx) * l.channels;
        for (std::int64_t c = 0; c < l.channels; ++c) raw.push_back(static_cast<char>(byte(v[base + c])));
      }
    }
  }
  uLongf packed_size = compressBound(static_cast<uLong>(raw.size()));
  std::string packed(packed_size, '\0');
  int rc = compress2(reinterpret_cast<Bytef*>(packed.data()), &packed_size, reinterpret_cast<const Bytef*>(raw.data()),
                     static_cast<uLong>(raw.size()), Z_BEST_SPEED);
  KERASCPP_CHECK_VALUE(rc == Z_OK, "tensor_png: zlib compress failed with code {}", rc);
  packed.resize(packed_size);

  std::string png("\x89PNG\r\n\x1a\n", 8);
  std::string header;
  put_u32(header, static_cast<std::uint32_t>(out_w));
  put_u32(header, static_cast<std::uint32_t>(out_h));
  header.push_back(8);                        // bit depth
  header.push_back(l.channels == 3 ? 2 : 0);  // colour type: RGB or greyscale
  header.append(std::string("\0\0\0", 3));    // compression, filter, interlace
  put_chunk(png, "IHDR", header);
  put_chunk(png, "IDAT", packed);
  put_chunk(png, "IEND", "");
  return png;
}

std::string base64(const std::string& bytes) {
  static const char* kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    std::uint32_t n = (std::uint32_t(std::uint8_t(bytes[i])) << 16) | (std::uint32_t(std::uint8_t(bytes[i + 1])) << 8) |
                      std::uint8_t(bytes[i + 2]);
    for (int k = 3; k >= 0; --k) out.push_back(kAlphabet[(n >> (6 * k)) & 63]);
  }
  if (i < bytes.size()) {
    std::uint32_t n = std::uint32_t(std::uint8_t(bytes[i])) << 16;
    if (i + 1 < bytes.size()) n |= std::uint32_t(std::uint8_t(bytes[i + 1])) << 8;
    out.push_back(kAlphabet[(n >> 18) & 63]);
    out.push_back(kAlphabet[(n >> 12) & 63]);
    out.push_back(i + 1 < bytes.size() ? kAlphabet[(n >> 6) & 63] : '=');
    out.push_back('=');
  }
  return out;
}

}  // namespace kerascpp::notebook
