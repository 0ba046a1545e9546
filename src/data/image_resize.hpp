// Internal: resizing one HWC image (or a window of it) into float32, what resize_image and
// image_dataset_from_directory share.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace kerascpp::data::image_detail {

enum class Interpolation { bilinear, nearest };

// ValueError naming `op` unless `name` is "bilinear" or "nearest" (Keras' other methods are listed).
Interpolation parse_interpolation(const std::string& name, const char* op);

// A height x width x channels image of T (uint8 or float) whose window box = (top, left, rows,
// columns) is resized to out_h x out_w x channels float32 at `out`, as tf.image.resize without
// antialiasing (half-pixel centres, edge pixels repeated).
template <class T>
void resize_window(const T* image, std::int64_t width, std::int64_t channels, std::array<std::int64_t, 4> box,
                   std::int64_t out_h, std::int64_t out_w, Interpolation method, float* out);

// resize_window along one axis as a matrix, for the Resizing layer (which resizes with matmuls):
// the out x in weights (row-major) that map positions [begin, begin + size) of an axis of length
// `in` to `out` positions; the other positions weigh 0. Applied to both axes in turn, they give
// resize_window's values up to float rounding.
std::vector<float> resize_matrix(std::int64_t in, std::int64_t begin, std::int64_t size, std::int64_t out,
                                 Interpolation method);

}  // namespace kerascpp::data::image_detail
