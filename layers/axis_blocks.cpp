#include "axis_blocks.hpp"

namespace kerascpp::detail {

// The zero blocks are allocated like any output, on x's device.
Tensor pad_axis(Backend& be, const Tensor& x, int axis, std::int64_t before, std::int64_t after) {
  if (before == 0 && after == 0) return x;
  std::vector<Tensor> parts;
  auto zeros = [&](std::int64_t n) {
    Shape s = x.shape();
    s[static_cast<std::size_t>(axis)] = n;
    return Tensor::zeros(s, DType::float32, x.device());
  };
  if (before) parts.push_back(zeros(before));
  parts.push_back(x);
  if (after) parts.push_back(zeros(after));
  Shape out = x.shape();
  out[static_cast<std::size_t>(axis)] += before + after;
  Tensor y(out);
  be.concat(parts, axis, y);
  return y;
}

// The inverse: the middle part of dy along `axis`.
Tensor crop_axis(Backend& be, const Tensor& dy, int axis, std::int64_t before, std::int64_t after) {
  if (before == 0 && after == 0) return dy;
  std::vector<Tensor> parts;
  auto part = [&](std::int64_t n) {
    Shape s = dy.shape();
    s[static_cast<std::size_t>(axis)] = n;
    parts.emplace_back(s);
  };
  if (before) part(before);
  part(dy.dim(axis) - before - after);
  if (after) part(after);
  be.split(dy, axis, parts);
  return parts[before ? 1 : 0];
}

// Nearest upsampling along one axis of x (N, H, W, C): a copy of each slice `times` times in a row.
// Viewed as (..., n, 1, rest) the copies are a concatenation along the new axis of size 1.
Tensor repeat_axis(Backend& be, const Tensor& x, int axis, std::int64_t times) {
  if (times == 1) return x;
  Shape view = x.shape();
  view.insert(view.begin() + axis + 1, 1);
  Tensor v = x.reshape(view);
  Shape out = view;
  out[static_cast<std::size_t>(axis) + 1] = times;
  Tensor y(out);
  be.concat(std::vector<Tensor>(static_cast<std::size_t>(times), v), axis + 1, y);
  Shape merged = x.shape();
  merged[static_cast<std::size_t>(axis)] *= times;
  return y.reshape(merged);
}

// Its gradient: the sum of the `times` copies' gradients.
Tensor repeat_axis_backward(Backend& be, const Tensor& dy, int axis, std::int64_t times) {
  if (times == 1) return dy;
  Shape view = dy.shape();
  view[static_cast<std::size_t>(axis)] /= times;
  view.insert(view.begin() + axis + 1, times);
  Shape part_shape = view;
  part_shape[static_cast<std::size_t>(axis) + 1] = 1;
  std::vector<Tensor> parts(static_cast<std::size_t>(times), Tensor());
  for (auto& p : parts) p = Tensor(part_shape);
  be.split(dy.reshape(view), axis + 1, parts);
  Shape in = view;
  in.erase(in.begin() + axis + 1);
  for (auto& p : parts) p = p.reshape(in);  // drop the size-1 axis: a view
  Tensor dx(in);
  be.add(parts, dx);
  return dx;
}

}  // namespace kerascpp::detail
