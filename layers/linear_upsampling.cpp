// See linear_upsampling.hpp. Every step is a Backend op, so the same code runs on CPU and CUDA.
#include "linear_upsampling.hpp"

#include <cmath>
#include <vector>

namespace kerascpp::detail {
namespace {

Shape with_dim(Shape s, int axis, std::int64_t n) {
  s[static_cast<std::size_t>(axis)] = n;
  return s;
}

// x cut along `axis` into pieces of the given sizes (which sum to x.dim(axis)).
std::vector<Tensor> cut(Backend& be, const Tensor& x, int axis, const std::vector<std::int64_t>& sizes) {
  std::vector<Tensor> parts;
  for (auto n : sizes) parts.emplace_back(with_dim(x.shape(), axis, n), DType::float32, x.device());
  be.split(x, axis, parts);
  return parts;
}

Tensor join(Backend& be, const std::vector<Tensor>& parts, int axis) {
  std::int64_t n = 0;
  for (auto& p : parts) n += p.dim(axis);
  Tensor y(with_dim(parts[0].shape(), axis, n), DType::float32, parts[0].device());
  be.concat(parts, axis, y);
  return y;
}

// x along `axis` as its first row, the rows between (none when n == 2) and its last row (n >= 2).
struct Ends {
  Tensor first;
  std::vector<Tensor> middle;
  Tensor last;
};
Ends ends(Backend& be, const Tensor& x, int axis) {
  const std::int64_t n = x.dim(axis);
  if (n == 2) {
    auto p = cut(be, x, axis, {1, 1});
    return {p[0], {}, p[1]};
  }
  auto p = cut(be, x, axis, {1, n - 2, 1});
  return {p[0], {p[1]}, p[2]};
}

std::vector<Tensor> cat(std::vector<Tensor> a, const std::vector<Tensor>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// shift +1: y[i] = x[min(i + 1, n - 1)]; shift -1: y[i] = x[max(i - 1, 0)] (n >= 2).
Tensor shifted(Backend& be, const Tensor& x, int axis, int shift) {
  Ends e = ends(be, x, axis);
  if (shift > 0) return join(be, cat(e.middle, {e.last, e.last}), axis);
  return join(be, cat({e.first, e.first}, e.middle), axis);
}

// The adjoint of shifted(): each input row gets the gradients of the output rows that read it.
Tensor shifted_backward(Backend& be, const Tensor& g, int axis, int shift) {
  const std::int64_t n = g.dim(axis);
  Ends e = ends(be, g, axis);
  Tensor zero = Tensor::zeros(with_dim(g.shape(), axis, 1), DType::float32, g.device());
  Tensor zeros = Tensor::zeros(with_dim(g.shape(), axis, n - 1), DType::float32, g.device());
  if (shift > 0) {
    // y[i] = x[i + 1] for i < n - 1 and y[n - 1] = x[n - 1]: dx = (0, g[0 .. n-2]) + (0 .. 0, g[n - 1]).
    Tensor dx = join(be, cat(cat({zero}, {e.first}), e.middle), axis);
    be.add_inplace(dx, join(be, {zeros, e.last}, axis));
    return dx;
  }
  // y[i] = x[i - 1] for i > 0 and y[0] = x[0]: dx = (g[1 .. n-1], 0) + (g[0], 0 .. 0).
  Tensor dx = join(be, cat(e.middle, {e.last, zero}), axis);
  be.add_inplace(dx, join(be, {e.first, zeros}, axis));
  return dx;
}

// Phase p's offset d_p = (p + 0.5) / times - 0.5.
double phase_offset(std::int64_t p, std::int64_t times) { return (double(p) + 0.5) / double(times) - 0.5; }

}  // namespace

Tensor linear_upsample_axis(Backend& be, const Tensor& x, int axis, std::int64_t times) {
  if (times == 1) return x;
  const std::int64_t n = x.dim(axis);
  Tensor next, prev;
  if (n >= 2) next = shifted(be, x, axis, +1), prev = shifted(be, x, axis, -1);
  // Each phase viewed as (..., n, 1, ...), then interleaved: concatenated along that new axis.
  Shape view = x.shape();
  view.insert(view.begin() + axis + 1, 1);
  std::vector<Tensor> phases;
  for (std::int64_t p = 0; p < times; ++p) {
    const double d = phase_offset(p, times);
    Tensor y = x.clone();
    if (n >= 2 && d != 0) {  // one pixel: every phase is that pixel
      Tensor neighbour = (d > 0 ? next : prev).clone();
      be.scale(y, static_cast<float>(1 - std::fabs(d)));
      be.scale(neighbour, static_cast<float>(std::fabs(d)));
      be.add_inplace(y, neighbour);
    }
    phases.push_back(y.reshape(view));
  }
  Shape out = view;
  out[static_cast<std::size_t>(axis) + 1] = times;
  Tensor y(out, DType::float32, x.device());
  be.concat(phases, axis + 1, y);
  return y.reshape(with_dim(x.shape(), axis, n * times));
}

Tensor linear_upsample_axis_backward(Backend& be, const Tensor& dy, int axis, std::int64_t times) {
  if (times == 1) return dy;
  const std::int64_t n = dy.dim(axis) / times;
  Shape view = with_dim(dy.shape(), axis, n);
  view.insert(view.begin() + axis + 1, times);
  Shape phase_shape = view;
  phase_shape[static_cast<std::size_t>(axis) + 1] = 1;
  std::vector<Tensor> phases;
  for (std::int64_t p = 0; p < times; ++p) phases.emplace_back(phase_shape, DType::float32, dy.device());
  be.split(dy.reshape(view), axis + 1, phases);
  const Shape in = with_dim(dy.shape(), axis, n);
  Tensor dx = Tensor::zeros(in, DType::float32, dy.device());
  Tensor dnext = Tensor::zeros(in, DType::float32, dy.device()), dprev = Tensor::zeros(in, DType::float32, dy.device());
  for (std::int64_t p = 0; p < times; ++p) {
    const double d = phase_offset(p, times);
    Tensor g = phases[static_cast<std::size_t>(p)].reshape(in);
    if (n < 2 || d == 0) {
      be.add_inplace(dx, g);
      continue;
    }
    Tensor a = g.clone(), b = g.clone();
    be.scale(a, static_cast<float>(1 - std::fabs(d)));
    be.scale(b, static_cast<float>(std::fabs(d)));
    be.add_inplace(dx, a);
    be.add_inplace(d > 0 ? dnext : dprev, b);
  }
  if (n >= 2) {
    be.add_inplace(dx, shifted_backward(be, dnext, axis, +1));
    be.add_inplace(dx, shifted_backward(be, dprev, axis, -1));
  }
  return dx;
}

}  // namespace kerascpp::detail
