// See linear_upsampling.hpp: the Backend's upsample_linear ops (CPU loops, CUDA kernels) do the
// work; the taps are backend/linear_resize_taps.hpp.
#include "linear_upsampling.hpp"

namespace kerascpp::detail {

Tensor linear_upsample_axis(Backend& be, const Tensor& x, int axis, std::int64_t times) {
  if (times == 1) return x;
  Shape s = x.shape();
  s[static_cast<std::size_t>(axis)] *= times;
  Tensor y(s, DType::float32, x.device());
  be.upsample_linear(x, axis, times, y);
  return y;
}

Tensor linear_upsample_axis_backward(Backend& be, const Tensor& dy, int axis, std::int64_t times) {
  if (times == 1) return dy;
  Shape s = dy.shape();
  s[static_cast<std::size_t>(axis)] /= times;
  Tensor dx(s, DType::float32, dy.device());
  be.upsample_linear_backward(dy, axis, times, dx);
  return dx;
}

}  // namespace kerascpp::detail
