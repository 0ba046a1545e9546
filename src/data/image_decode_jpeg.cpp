// decode_jpeg: libjpeg-turbo (Debian's libjpeg62-turbo) decodes from memory. libjpeg reports a
// fatal error by calling error_exit, which must not return; it longjmps back to decode_rows, whose
// frame holds only trivially destructible objects, and the caller turns the message into an IOError.
#include <fmt/format.h>

#include <algorithm>
#include <csetjmp>
#include <cstdio>  // jpeglib.h needs FILE
#include <vector>

#include <jerror.h>
#include <jpeglib.h>

#include "check.hpp"
#include "data/image_codec.hpp"
#include "kerascpp/data/images.hpp"
#include "kerascpp/error.hpp"

namespace kerascpp::data {
namespace {

constexpr const char* kImageDecodeJpegOp = "decode_jpeg";

struct ErrorManager {
  jpeg_error_mgr pub;  // first: libjpeg hands back a pointer to it
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
  bool truncated;  // libjpeg's "premature end" warning: the data ran out before the image did
};

[[noreturn]] void on_error(j_common_ptr cinfo) {
  auto* err = reinterpret_cast<ErrorManager*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, err->message);
  std::longjmp(err->jump, 1);
}

// Warnings (corrupt but decodable data) pass silently, as in TensorFlow, except a premature end:
// libjpeg would fill the rest of the image with grey, TensorFlow refuses the image, so do we.
void on_message(j_common_ptr cinfo, int level) {
  if (level < 0 && cinfo->err->msg_code == JWRN_JPEG_EOF) reinterpret_cast<ErrorManager*>(cinfo->err)->truncated = true;
}

struct Decoder {
  jpeg_decompress_struct cinfo{};
  ErrorManager err{};
  bool created = false;
  ~Decoder() {
    if (created) jpeg_destroy_decompress(&cinfo);
  }
};

// CMYK samples (inverted, as Adobe's encoder writes them, when the file has an Adobe marker) to RGB.
void cmyk_to_rgb(const JSAMPLE* cmyk, JSAMPLE* rgb, JDIMENSION width, bool inverted) {
  for (JDIMENSION x = 0; x < width; ++x, cmyk += 4, rgb += 3) {
    const unsigned k = inverted ? cmyk[3] : 255u - cmyk[3];
    for (int c = 0; c < 3; ++c) {
      const unsigned v = inverted ? cmyk[c] : 255u - cmyk[c];
      rgb[c] = static_cast<JSAMPLE>(v * k / 255);  // truncated, as TensorFlow converts CMYK
    }
  }
}

void rgb_to_grey(JSAMPLE* row, JDIMENSION width) {  // in place; libjpeg's own weights
  for (JDIMENSION x = 0; x < width; ++x)
    row[x] = static_cast<JSAMPLE>((299u * row[3 * x] + 587u * row[3 * x + 1] + 114u * row[3 * x + 2] + 500u) / 1000u);
}

// Everything between setjmp and the last libjpeg call. Returns false after a libjpeg error (its
// text in d.err.message) or a truncated stream. `out` and `cmyk` live in the caller, so a longjmp
// skips no destructor.
bool decode_rows(Decoder& d, const image_detail::EncodedBytes& in, const DecodeJpegOptions& o,
                 const std::string& source, Tensor& out, std::vector<JSAMPLE>& cmyk) {
  jpeg_decompress_struct& c = d.cinfo;
  c.err = jpeg_std_error(&d.err.pub);
  d.err.pub.error_exit = on_error;
  d.err.pub.emit_message = on_message;
  if (setjmp(d.err.jump)) return false;
  jpeg_create_decompress(&c);
  d.created = true;
  jpeg_mem_src(&c, in.data, static_cast<unsigned long>(in.size));
  jpeg_read_header(&c, TRUE);
  const bool from_cmyk = c.jpeg_color_space == JCS_CMYK || c.jpeg_color_space == JCS_YCCK;
  const int channels = o.channels != 0 ? static_cast<int>(o.channels) : (c.num_components == 1 ? 1 : 3);
  c.out_color_space = from_cmyk ? JCS_CMYK : (channels == 1 ? JCS_GRAYSCALE : JCS_RGB);
  c.scale_num = 1;
  c.scale_denom = static_cast<unsigned>(o.ratio);
  c.dct_method = o.dct_method == "INTEGER_ACCURATE" ? JDCT_ISLOW : JDCT_IFAST;
  jpeg_calc_output_dimensions(&c);
  image_detail::check_decoded_size(c.output_height, c.output_width, channels, kImageDecodeJpegOp, source);
  jpeg_start_decompress(&c);
  out = Tensor({c.output_height, c.output_width, channels}, DType::uint8, Device{});
  auto* dst = static_cast<JSAMPLE*>(out.raw());
  const std::size_t stride = std::size_t{c.output_width} * static_cast<std::size_t>(channels);
  if (from_cmyk) cmyk.resize(std::size_t{c.output_width} * 4);
  const bool inverted = c.saw_Adobe_marker;
  while (c.output_scanline < c.output_height) {
    JSAMPLE* row = dst + std::size_t{c.output_scanline} * stride;
    JSAMPROW target = from_cmyk ? cmyk.data() : row;
    jpeg_read_scanlines(&c, &target, 1);
    if (d.err.truncated) return false;  // stop now: the rest would be filler
    if (from_cmyk) {
      if (channels == 1) {
        std::vector<JSAMPLE>& rgb = cmyk;  // converted in place: RGB is shorter than CMYK
        cmyk_to_rgb(cmyk.data(), rgb.data(), c.output_width, inverted);
        rgb_to_grey(rgb.data(), c.output_width);
        std::copy_n(rgb.data(), c.output_width, row);
      } else {
        cmyk_to_rgb(cmyk.data(), row, c.output_width, inverted);
      }
    }
  }
  jpeg_finish_decompress(&c);
  return !d.err.truncated;
}

}  // namespace

Tensor decode_jpeg(const Tensor& contents, const DecodeJpegOptions& options) {
  const std::string prefix = image_detail::image_error_prefix(kImageDecodeJpegOp, options.source);
  KERASCPP_CHECK_VALUE(options.channels == 0 || options.channels == 1 || options.channels == 3,
                       "{}channels must be 0, 1 or 3, got {}", prefix, options.channels);
  KERASCPP_CHECK_VALUE(!(options.ratio != 1 && options.ratio != 2 && options.ratio != 4 && options.ratio != 8),
                       "{}ratio must be 1, 2, 4 or 8, got {}", prefix, options.ratio);
  KERASCPP_CHECK_VALUE(
      options.dct_method.empty() || options.dct_method == "INTEGER_FAST" || options.dct_method == "INTEGER_ACCURATE",
      "{}dct_method must be \"\", \"INTEGER_FAST\" or \"INTEGER_ACCURATE\", got \"{}\"", prefix, options.dct_method);
  const image_detail::EncodedBytes in = image_detail::encoded_bytes(contents, kImageDecodeJpegOp);
  KERASCPP_CHECK_IO(in.size != 0, "{}the data is empty, not a JPEG image", prefix);
  Decoder d;
  Tensor out;
  std::vector<JSAMPLE> cmyk;
  if (!decode_rows(d, in, options, options.source, out, cmyk)) {
    KERASCPP_CHECK_IO(!d.err.truncated, "{}the JPEG data is truncated ({} bytes end before the image does)", prefix,
                      in.size);
    throw IOError(fmt::format("{}not a valid JPEG image: {}", prefix, d.err.message));
  }
  return out;
}

}  // namespace kerascpp::data
