// Bilinear upsampling along one axis (UpSampling2D(bilinear)): parallel loops over the output
// (forward) and over the input gradient (backward, a gather over the outputs that read each
// input, so no two threads write one element and the sums keep a fixed order).
#include <fmt/format.h>

#include "backend/cpu/checks.hpp"
#include "backend/cpu/cpu_backend.hpp"
#include "backend/cpu/parallel.hpp"
#include "backend/linear_resize_taps.hpp"
#include "backend/op_shapes.hpp"
#include "check.hpp"

namespace kerascpp::cpu {

void CpuBackend::upsample_linear(const Tensor& x, int axis, std::int64_t times, Tensor& y) {
  enter();
  const char* op = "upsample_linear";
  KERASCPP_CHECK_DEVICE(x.device() == Device{}, "{}: x is on {}, not the host", op, x.device().str());
  if (!y.defined()) {
    Shape s = x.shape();
    if (axis >= 0 && axis < x.rank()) s[static_cast<std::size_t>(axis)] *= times;
    y = Tensor(s, DType::float32, Device{});
  }
  const auto d = op_shapes::linear_resize_dims(x, y, axis, times, op);
  const float* px = x.data<float>();
  float* py = y.data<float>();
  const std::int64_t m = d.n * times;
  // One block per (outer, output position) row of `inner` contiguous elements.
  parallel_for(d.outer * m, std::max<std::int64_t>(1, kElementGrain / d.inner), [&](std::int64_t r0, std::int64_t r1) {
    for (std::int64_t r = r0; r < r1; ++r) {
      const std::int64_t b = r / m, o = r % m;
      const linear_resize::Taps t = linear_resize::taps(o, d.n, times);
      const float* lo = px + (b * d.n + t.lo) * d.inner;
      const float* hi = px + (b * d.n + t.hi) * d.inner;
      float* out = py + r * d.inner;
      for (std::int64_t k = 0; k < d.inner; ++k) out[k] = t.w_lo * lo[k] + t.w_hi * hi[k];
    }
  });
}

void CpuBackend::upsample_linear_backward(const Tensor& dy, int axis, std::int64_t times, Tensor& dx) {
  enter();
  const char* op = "upsample_linear_backward";
  KERASCPP_CHECK_DEVICE(dy.device() == Device{}, "{}: dy is on {}, not the host", op, dy.device().str());
  if (!dx.defined()) {
    Shape s = dy.shape();
    if (axis >= 0 && axis < dy.rank() && times >= 1) s[static_cast<std::size_t>(axis)] /= times;
    dx = Tensor(s, DType::float32, Device{});
  }
  const auto d = op_shapes::linear_resize_dims(dx, dy, axis, times, op);
  const float* pdy = dy.data<float>();
  float* pdx = dx.data<float>();
  const std::int64_t m = d.n * times;
  parallel_for(d.outer * d.n, std::max<std::int64_t>(1, kElementGrain / d.inner),
               [&](std::int64_t r0, std::int64_t r1) {
                 for (std::int64_t r = r0; r < r1; ++r) {
                   const std::int64_t b = r / d.n, i = r % d.n;
                   float* out = pdx + r * d.inner;
                   for (std::int64_t k = 0; k < d.inner; ++k) out[k] = 0.f;
                   for (std::int64_t o = linear_resize::first_output(i, times);
                        o < linear_resize::last_output(i, d.n, times); ++o) {
                     const float w = linear_resize::weight(o, i, d.n, times);
                     if (w == 0.f) continue;
                     const float* g = pdy + (b * m + o) * d.inner;
                     for (std::int64_t k = 0; k < d.inner; ++k) out[k] += w * g[k];
                   }
                 }
               });
}

}  // namespace kerascpp::cpu
