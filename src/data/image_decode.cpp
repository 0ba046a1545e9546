// decode_image (format sniffing, as tf.io.decode_image), read_file, and the helpers the JPEG and
// PNG decoders share.
#include <fmt/format.h>

#include <sys/stat.h>
#include <cstring>

#include <cerrno>
#include <cstdio>

#include "check.hpp"
#include "data/image_codec.hpp"
#include "kerascpp/data/images.hpp"
#include "kerascpp/error.hpp"

namespace kerascpp::data {
namespace image_detail {

EncodedBytes encoded_bytes(const Tensor& contents, const char* op) {
  KERASCPP_CHECK_SHAPE(contents.dtype() == DType::uint8 && contents.rank() == 1,
                       "{}: the encoded image must be a 1-D uint8 tensor of the file's bytes "
                       "(data::read_file or data::bytes_tensor makes one), got {} of shape {}",
                       op, dtype_name(contents.dtype()), shape_str(contents.shape()));
  KERASCPP_CHECK_DEVICE(contents.device() == Device{}, "{}: the encoded image is on {}; decode from host memory", op,
                        contents.device().str());
  return {static_cast<const unsigned char*>(contents.raw()), contents.nbytes()};
}

std::string image_error_prefix(const char* op, const std::string& source) {
  return source.empty() ? fmt::format("{}: ", op) : fmt::format("{}: {}: ", op, source);
}

void check_decoded_size(std::int64_t height, std::int64_t width, std::int64_t channels, const char* op,
                        const std::string& source) {
  KERASCPP_CHECK_IO(height > 0 && width > 0, "{}the image header declares an empty {} x {} image",
                    image_error_prefix(op, source), height, width);
  KERASCPP_CHECK_IO(height * width * channels <= kMaxDecodedBytes,
                    "{}the image header declares {} x {} x {}, over the {} MiB a decoded image may take "
                    "(a corrupt header, or an image to downscale before training)",
                    image_error_prefix(op, source), height, width, channels, kMaxDecodedBytes >> 20);
}

}  // namespace image_detail

std::string sniff_image_format(const Tensor& contents) {
  const image_detail::EncodedBytes in = image_detail::encoded_bytes(contents, "sniff_image_format");
  const auto starts_with = [&](const char* sig, std::size_t n) {
    return in.size >= n && std::memcmp(in.data, sig, n) == 0;
  };
  if (starts_with("\xff\xd8\xff", 3)) return "jpeg";
  if (starts_with("\x89PNG\r\n\x1a\n", 8)) return "png";
  if (starts_with("GIF87a", 6) || starts_with("GIF89a", 6)) return "gif";
  if (starts_with("BM", 2)) return "bmp";
  return "";
}

Tensor decode_image(const Tensor& contents, const DecodeImageOptions& options) {
  const std::string prefix = image_detail::image_error_prefix("decode_image", options.source);
  KERASCPP_CHECK_VALUE(options.channels >= 0 && options.channels <= 4 && options.channels != 2,
                       "{}channels must be 0, 1, 3 or 4, got {}", prefix, options.channels);
  const std::string format = sniff_image_format(contents);
  if (format == "png") return decode_png(contents, {.channels = options.channels, .source = options.source});
  if (format == "jpeg") {
    const std::int64_t jpeg_channels = options.channels == 4 ? 3 : options.channels;
    Tensor rgb =
        decode_jpeg(contents, {.channels = jpeg_channels, .dct_method = options.dct_method, .source = options.source});
    if (options.channels != 4) return rgb;
    // JPEG has no alpha: an opaque one is added, so that an RGBA pipeline can read JPEGs too.
    Tensor rgba({rgb.dim(0), rgb.dim(1), 4}, DType::uint8, Device{});
    const auto* src = static_cast<const std::uint8_t*>(rgb.raw());
    auto* dst = static_cast<std::uint8_t*>(rgba.raw());
    for (std::int64_t p = 0, n = rgb.dim(0) * rgb.dim(1); p < n; ++p, src += 3, dst += 4) {
      std::memcpy(dst, src, 3);
      dst[3] = 255;
    }
    return rgba;
  }
  KERASCPP_CHECK_IO(format != "gif" && format != "bmp",
                    "{}{} images are not supported (JPEG and PNG are); convert the file to PNG", prefix,
                    format == "gif" ? "GIF" : "BMP");
  throw IOError(fmt::format("{}unknown image format: the data is neither JPEG nor PNG ({} bytes{})", prefix,
                            contents.nbytes(), contents.nbytes() == 0 ? ", empty" : ""));
}

Tensor read_file(const std::string& path) {
  // Straight into the tensor, in one read: images are read once per element per epoch.
  std::FILE* f = std::fopen(path.c_str(), "rb");
  KERASCPP_CHECK_IO(f, "read_file: cannot open '{}': {}", path, std::strerror(errno));
  struct stat st{};
  if (::fstat(::fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
    std::fclose(f);
    throw IOError(fmt::format("read_file: '{}' is not a regular file", path));
  }
  Tensor t({static_cast<std::int64_t>(st.st_size)}, DType::uint8, Device{});
  const std::size_t got = st.st_size > 0 ? std::fread(t.raw(), 1, t.nbytes(), f) : 0;
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  KERASCPP_CHECK_IO(!failed && got == t.nbytes(), "read_file: reading '{}' failed after {} of {} bytes", path, got,
                    t.nbytes());
  return t;
}

}  // namespace kerascpp::data
