// decode_png: libpng's sequential reader over memory, its transforms doing the channel and depth
// conversions as tf.io.decode_png asks for them. libpng reports a fatal error through our error
// function, which longjmps back to decode_rows (a frame without destructors); the caller throws.
#include <fmt/format.h>
#include <png.h>

#include <csetjmp>
#include <cstring>
#include <vector>

#include "check.hpp"
#include "data/image_codec.hpp"
#include "kerascpp/data/images.hpp"
#include "kerascpp/error.hpp"

namespace kerascpp::data {
namespace {

constexpr const char* kImageDecodePngOp = "decode_png";

struct Reader {
  png_structp png = nullptr;
  png_infop info = nullptr;
  const unsigned char* data = nullptr;
  std::size_t size = 0, offset = 0;
  bool truncated = false;
  char message[256] = {};
  ~Reader() {
    if (png) png_destroy_read_struct(&png, info ? &info : nullptr, nullptr);
  }
};

[[noreturn]] void on_error(png_structp png, png_const_charp message) {
  auto* r = static_cast<Reader*>(png_get_error_ptr(png));
  std::snprintf(r->message, sizeof r->message, "%s", message);
  png_longjmp(png, 1);
}

void on_warning(png_structp, png_const_charp) {}  // ancillary problems (a bad CRC in a text chunk)

void read_bytes(png_structp png, png_bytep out, png_size_t n) {
  auto* r = static_cast<Reader*>(png_get_io_ptr(png));
  if (n > r->size - r->offset) {
    r->truncated = true;
    png_error(png, "the data ends early");
  }
  std::memcpy(out, r->data + r->offset, n);
  r->offset += n;
}

// Everything between setjmp and the last libpng call; false after a libpng error. `out` and
// `rows` live in the caller, so a longjmp skips no destructor.
bool decode_rows(Reader& r, std::int64_t want, const std::string& source, Tensor& out, std::vector<png_bytep>& rows) {
  png_structp png = r.png;
  png_infop info = r.info;
  if (setjmp(png_jmpbuf(png))) return false;
  png_set_read_fn(png, &r, read_bytes);
  png_read_info(png, info);
  const png_uint_32 width = png_get_image_width(png, info), height = png_get_image_height(png, info);
  const int color = png_get_color_type(png, info);
  const bool has_trns = png_get_valid(png, info, PNG_INFO_tRNS) != 0;
  // The file's own channel count, which channels = 0 keeps: a palette counts as RGB, and a
  // transparency chunk (tRNS) as an alpha channel, as libpng expands them.
  const int have = (color & PNG_COLOR_MASK_COLOR) ? 3 : 1;
  const bool alpha = (color & PNG_COLOR_MASK_ALPHA) != 0 || has_trns;
  const int channels = want != 0 ? static_cast<int>(want) : have + (alpha ? 1 : 0);
  image_detail::check_decoded_size(height, width, channels, kImageDecodePngOp, source);

  png_set_strip_16(png);
  png_set_packing(png);  // 1, 2 and 4-bit samples one per byte
  if (color == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
  if (color == PNG_COLOR_TYPE_GRAY && png_get_bit_depth(png, info) < 8) png_set_expand_gray_1_2_4_to_8(png);
  if (has_trns) png_set_tRNS_to_alpha(png);
  const bool want_alpha = channels == 2 || channels == 4, want_color = channels >= 3;
  if (alpha && !want_alpha) png_set_strip_alpha(png);
  if (!alpha && want_alpha) png_set_add_alpha(png, 0xff, PNG_FILLER_AFTER);
  if (have == 1 && want_color) png_set_gray_to_rgb(png);
  if (have == 3 && !want_color) png_set_rgb_to_gray_fixed(png, 1, -1, -1);
  png_set_interlace_handling(png);
  png_read_update_info(png, info);
  if (png_get_rowbytes(png, info) != std::size_t{width} * static_cast<std::size_t>(channels))
    png_error(png, "unexpected row size after conversion");

  out = Tensor({static_cast<std::int64_t>(height), static_cast<std::int64_t>(width), channels}, DType::uint8, Device{});
  rows.resize(height);
  auto* dst = static_cast<png_bytep>(out.raw());
  for (png_uint_32 y = 0; y < height; ++y) rows[y] = dst + std::size_t{y} * width * static_cast<std::size_t>(channels);
  png_read_image(png, rows.data());
  png_read_end(png, nullptr);
  return true;
}

}  // namespace

Tensor decode_png(const Tensor& contents, const DecodePngOptions& options) {
  const std::string prefix = image_detail::image_error_prefix(kImageDecodePngOp, options.source);
  KERASCPP_CHECK_VALUE(options.channels >= 0 && options.channels <= 4 && options.channels != 2,
                       "{}channels must be 0, 1, 3 or 4, got {}", prefix, options.channels);
  const image_detail::EncodedBytes in = image_detail::encoded_bytes(contents, kImageDecodePngOp);
  KERASCPP_CHECK_IO(in.size >= 8 && png_sig_cmp(in.data, 0, 8) == 0,
                    "{}not a PNG image (the data does not start with PNG's 8-byte signature)", prefix);
  Reader r;
  r.data = in.data;
  r.size = in.size;
  r.png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &r, on_error, on_warning);
  if (r.png) r.info = png_create_info_struct(r.png);
  KERASCPP_CHECK_IO(r.png && r.info, "{}libpng could not allocate its reader", prefix);
  // A corrupt chunk length must not make libpng allocate gigabytes before it fails.
  png_set_chunk_malloc_max(r.png, 64u << 20);
  Tensor out;
  std::vector<png_bytep> rows;
  if (!decode_rows(r, options.channels, options.source, out, rows)) {
    KERASCPP_CHECK_IO(!r.truncated, "{}the PNG data is truncated ({} bytes end before the image does)", prefix,
                      in.size);
    throw IOError(fmt::format("{}not a valid PNG image: {}", prefix, r.message));
  }
  return out;
}

}  // namespace kerascpp::data
