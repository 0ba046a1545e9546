// The index arithmetic of the patch matrix (im2col.cu), shared with a CPU test
// (tests/test_im2col_index.cpp) that checks it against the CPU backend's convolutions on
// machines without a GPU. For NHWC x [n, h, w, c], kernel kh x kw, strides (sh, sw), padding
// (top, left), row m = (b, oy, ox) of the patch matrix col [n·oh·ow, kh·kw·c] holds
//   col[m, (ky·kw + kx)·c + ch] = x[b, oy·sh + ky − top, ox·sw + kx − left, ch]
// (zero outside x): the row order of the HWIO kernel viewed as [kh·kw·c, filters].
#pragma once
#include <cstdint>

#include "backend/host_device.hpp"

namespace kerascpp::cuda::kern {

// A convolution's geometry: NHWC input [n, h, w, c], output [n, oh, ow, *], kernel kh x kw,
// strides sh, sw, padding top and left (the bottom/right padding follows from oh, ow).
struct ConvGeometry {
  std::int64_t n, h, w, c, oh, ow, kh, kw, sh, sw, top, left;
};

// Where patch row m starts: image b and the input position of its kernel's top-left tap.
struct PatchRow {
  std::int64_t b, y0, x0;
};

KERASCPP_HOST_DEVICE inline PatchRow patch_row(const ConvGeometry& g, std::int64_t m) {
  const std::int64_t ox = m % g.ow, oy = (m / g.ow) % g.oh;
  return {m / (g.ow * g.oh), oy * g.sh - g.top, ox * g.sw - g.left};
}

// The offset in x of col[m, k] for the row's origin r, or −1 where it lies in the padding.
// k < 2^31 (the caller checks kh·kw·c), so its decoding is 32-bit.
KERASCPP_HOST_DEVICE inline std::int64_t patch_source(const ConvGeometry& g, const PatchRow& r, int k) {
  const int c = static_cast<int>(g.c), kw = static_cast<int>(g.kw);
  const int ch = k % c, tap = k / c;
  const std::int64_t iy = r.y0 + tap / kw, ix = r.x0 + tap % kw;
  if (iy < 0 || iy >= g.h || ix < 0 || ix >= g.w) return -1;
  return ((r.b * g.h + iy) * g.w + ix) * g.c + ch;
}

// The adjoint: calls f(m, tap) for every patch row m and tap = ky·kw + kx that reads input
// pixel p = (b, iy, ix), ky and kx ascending (a fixed order); that entry is col[m, tap·c + ch].
template <class F>
KERASCPP_HOST_DEVICE inline void for_each_patch_reading(const ConvGeometry& g, std::int64_t p, F&& f) {
  const std::int64_t ix = p % g.w, iy = (p / g.w) % g.h, b = p / (g.w * g.h);
  for (std::int64_t ky = 0; ky < g.kh; ++ky) {
    const std::int64_t ty = iy + g.top - ky;
    if (ty < 0 || ty % g.sh != 0 || ty / g.sh >= g.oh) continue;
    for (std::int64_t kx = 0; kx < g.kw; ++kx) {
      const std::int64_t tx = ix + g.left - kx;
      if (tx < 0 || tx % g.sw != 0 || tx / g.sw >= g.ow) continue;
      f((b * g.oh + ty / g.sh) * g.ow + tx / g.sw, ky * g.kw + kx);
    }
  }
}

}  // namespace kerascpp::cuda::kern
