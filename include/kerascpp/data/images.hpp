// Image decoding and resizing, as tf.io.decode_jpeg / decode_png / decode_image and tf.image.resize:
// JPEG through libjpeg-turbo, PNG through libpng. Encoded images are 1-D uint8 tensors of the file's
// bytes (kerascpp/data/bytes.hpp); decoded ones are uint8 tensors (height, width, channels).
#pragma once
#include <array>
#include <cstdint>
#include <string>

#include "kerascpp/tensor/tensor.hpp"

namespace kerascpp::data {

/// tf.io.decode_jpeg's arguments, plus the file name that error messages cite.
struct DecodeJpegOptions {
  /// 0: as the file has it (1 for grey, else 3); 1: grey; 3: RGB. A CMYK file is converted to RGB.
  std::int64_t channels = 0;
  /// 1, 2, 4 or 8: libjpeg-turbo's scaled decoding, each side ceil(side / ratio), much faster than
  /// decoding whole and resizing.
  std::int64_t ratio = 1;
  /// "" (TensorFlow's default, "INTEGER_FAST"), "INTEGER_FAST" or "INTEGER_ACCURATE" (libjpeg's
  /// slow integer IDCT, what Pillow uses).
  std::string dct_method{};
  std::string source{};  ///< named in error messages, e.g. the file the bytes came from
};

/// tf.io.decode_png's arguments (uint8 output only), plus the file name that errors cite.
struct DecodePngOptions {
  /// 0: as the file has it (1 grey, 2 grey + alpha, 3 RGB, 4 RGBA; a palette gives 3, or 4 with a
  /// transparency chunk); 1, 3 or 4 convert (RGB to grey with libpng's ITU-R BT.709 weights, a
  /// missing alpha is 255, an unwanted alpha is dropped). 16-bit samples keep their high byte.
  std::int64_t channels = 0;
  /// Named in error messages, e.g. the file the bytes came from.
  std::string source{};
};

/// tf.io.decode_image's arguments (expand_animations is moot: GIF is not supported).
struct DecodeImageOptions {
  /// 0, 1, 3 or 4. A JPEG asked for 4 channels gets an opaque alpha (255).
  std::int64_t channels = 0;
  std::string dct_method{};  ///< for JPEG, as DecodeJpegOptions::dct_method
  /// Named in error messages, e.g. the file the bytes came from.
  std::string source{};
};

/// Decodes a JPEG (bytes as a 1-D uint8 tensor) to uint8 (height, width, channels); IOError when corrupt.
Tensor decode_jpeg(const Tensor& contents, const DecodeJpegOptions& options = {});
/// Decodes a PNG to uint8 (height, width, channels); IOError naming `source` when corrupt or truncated.
Tensor decode_png(const Tensor& contents, const DecodePngOptions& options = {});
/// Decodes a JPEG or PNG, told apart by their signatures; BMP, GIF and others are an IOError saying so.
Tensor decode_image(const Tensor& contents, const DecodeImageOptions& options = {});
/// "jpeg", "png", "gif", "bmp" or "" (unknown) from the first bytes, as decode_image tells formats apart.
std::string sniff_image_format(const Tensor& contents);

/// The whole file as a 1-D uint8 tensor, as tf.io.read_file; IOError naming the path when unreadable.
Tensor read_file(const std::string& path);

/// tf.image.resize / keras.ops.image.resize without antialiasing: uint8 or float32 (H, W, C) or
/// (N, H, W, C) to float32 of `size` (height, width); "bilinear" or "nearest", half-pixel centres.
Tensor resize_image(const Tensor& images, std::array<std::int64_t, 2> size,
                    const std::string& interpolation = "bilinear");

/// Keras' smart_resize crop: the centred (top, left, height, width) window of a height x width
/// image with the aspect ratio of `size`, as image_dataset_from_directory(crop_to_aspect_ratio=True).
std::array<std::int64_t, 4> aspect_ratio_crop_box(std::int64_t height, std::int64_t width,
                                                  std::array<std::int64_t, 2> size);

/// tf.image.resize_with_pad's layout: the (top, left, height, width) a height x width image is resized
/// to inside `size`, aspect ratio kept, the rest zero (image_dataset_from_directory(pad_to_aspect_ratio)).
std::array<std::int64_t, 4> aspect_ratio_pad_box(std::int64_t height, std::int64_t width,
                                                 std::array<std::int64_t, 2> size);

}  // namespace kerascpp::data
