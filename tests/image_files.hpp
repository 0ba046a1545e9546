// Test images written by the libraries themselves: PNG through libpng, JPEG through libjpeg-turbo,
// so the decoders under test meet files their readers' own writers made.
#pragma once
#include <jpeglib.h>
#include <png.h>

#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

namespace kerascpp_test {

// 8-bit (or 16-bit, big-endian samples) PNG of `channels` 1-4 (grey, grey+alpha, RGB, RGBA),
// optionally Adam7-interlaced.
inline std::string png_bytes(int height, int width, int channels, const std::vector<std::uint8_t>& pixels,
                             int bit_depth = 8, bool interlaced = false) {
  static const int kColor[] = {0, PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA, PNG_COLOR_TYPE_RGB,
                               PNG_COLOR_TYPE_RGB_ALPHA};
  std::string out;
  std::vector<png_bytep> rows;  // before the setjmp: a longjmp back skips no destructor
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png_create_info_struct(png);
  if (setjmp(png_jmpbuf(png))) throw std::runtime_error("libpng could not write the test image");
  png_set_write_fn(
      png, &out,
      [](png_structp p, png_bytep data, png_size_t n) {
        static_cast<std::string*>(png_get_io_ptr(p))->append(reinterpret_cast<const char*>(data), n);
      },
      nullptr);
  png_set_IHDR(png, info, static_cast<png_uint_32>(width), static_cast<png_uint_32>(height), bit_depth,
               kColor[channels], interlaced ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
               PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  const std::size_t row = static_cast<std::size_t>(width * channels * bit_depth / 8);
  for (int y = 0; y < height; ++y) rows.push_back(const_cast<png_bytep>(pixels.data() + y * row));
  png_write_image(png, rows.data());  // all seven passes when interlaced
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return out;
}

// Baseline JPEG of 1 (grey) or 3 (RGB) channels at `quality`.
inline std::string jpeg_bytes(int height, int width, int channels, const std::vector<std::uint8_t>& pixels,
                              int quality = 90) {
  jpeg_compress_struct c{};
  jpeg_error_mgr err{};
  c.err = jpeg_std_error(&err);
  jpeg_create_compress(&c);
  unsigned char* buf = nullptr;
  unsigned long size = 0;
  jpeg_mem_dest(&c, &buf, &size);
  c.image_width = static_cast<JDIMENSION>(width);
  c.image_height = static_cast<JDIMENSION>(height);
  c.input_components = channels;
  c.in_color_space = channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_set_defaults(&c);
  jpeg_set_quality(&c, quality, TRUE);
  jpeg_start_compress(&c, TRUE);
  while (c.next_scanline < c.image_height) {
    JSAMPROW row = const_cast<JSAMPROW>(pixels.data() + std::size_t{c.next_scanline} * width * channels);
    jpeg_write_scanlines(&c, &row, 1);
  }
  jpeg_finish_compress(&c);
  jpeg_destroy_compress(&c);
  std::string out(reinterpret_cast<const char*>(buf), size);
  std::free(buf);
  return out;
}

// Pixels with every value different from its neighbours': (y * 31 + x * 7 + c * 101) mod 256.
inline std::vector<std::uint8_t> pattern(int height, int width, int channels) {
  std::vector<std::uint8_t> p(static_cast<std::size_t>(height * width * channels));
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x)
      for (int c = 0; c < channels; ++c)
        p[static_cast<std::size_t>((y * width + x) * channels + c)] =
            static_cast<std::uint8_t>((y * 31 + x * 7 + c * 101) % 256);
  return p;
}

}  // namespace kerascpp_test
