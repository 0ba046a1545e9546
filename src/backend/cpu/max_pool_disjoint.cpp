#include "backend/cpu/max_pool_disjoint.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <type_traits>
#include <vector>

#include "backend/cpu/add_rows.hpp"
#include "backend/cpu/nan_propagation.hpp"
#include "backend/cpu/parallel.hpp"
#include "check.hpp"
#include "simd_clones.hpp"

namespace kerascpp::cpu {

namespace {

using op_shapes::PoolShape;

// The element types, each with its exact widening to float32 for the compares.
// `Bits`: the unsigned integer of the same width, for blends written as bit operations (GCC
// turns a `take ? a : b` store into a masked store behind a branch, which data-dependent
// maxima mispredict).
struct Float32 {
  using T = float;
  using Bits = std::uint32_t;
  static float wide(float v) { return v; }
};
struct BFloat16 {
  using T = std::uint16_t;
  using Bits = std::uint16_t;
  static float wide(std::uint16_t v) { return std::bit_cast<float>(static_cast<std::uint32_t>(v) << 16); }
};

// [first, last) of the rows (or columns) window o covers, clipped to the image.
struct Span {
  std::int64_t origin, first, last;
};
Span window_span(std::int64_t o, std::int64_t stride, std::int64_t pad, std::int64_t pool, std::int64_t extent) {
  const std::int64_t origin = o * stride - pad;
  return {origin, std::max<std::int64_t>(origin, 0), std::min(origin + pool, extent)};
}
// The input rows (or columns) whose gradient output o writes: from its window's origin to the
// next window's (the first from 0, the last to the end), so the outputs' bands tile the image.
Span band_span(std::int64_t o, std::int64_t outputs, std::int64_t stride, std::int64_t pad, std::int64_t extent) {
  const std::int64_t origin = o * stride - pad;
  return {origin, o == 0 ? 0 : origin, o + 1 == outputs ? extent : std::min(origin + stride, extent)};
}

// Output rows (n, oh) per parallel block: about kElementGrain input elements.
std::int64_t row_grain(const PoolShape& s, const Pool2DGeometry& g) {
  return std::max<std::int64_t>(1, kElementGrain / std::max<std::int64_t>(1, s.iw * s.c * g.stride_h));
}

// One output row (n, oh): every window's maximum and argmax. A clone per instruction set.
// Window positions outermost, so consecutive updates of an output vector are a row apart (no
// chain of dependent stores per window). `v != v && m == m`: the first NaN replaces a number and
// stays.
// Channels: C when it is not 0 (a compile-time count unrolls the channel loop: 0.75-0.86 against
// 1.04-1.09 ms for 128x26x26x32 float32 on the Intel VM), else s.c.
// Argmax: the positions are blended at the values' width in `lanes` (one row, in cache) and
// narrowed to argmax's bytes at the end; blending bytes under a float compare's mask took most
// of the loop. Argmax false (inference): the maximum alone.
template <class E, std::int64_t C, bool Argmax>
KERASCPP_SIMD_CLONES_V4 void forward_row(const typename E::T* __restrict x, const PoolShape& s, const Pool2DGeometry& g,
                                         std::int64_t row, typename E::T* __restrict y, std::uint8_t* __restrict argmax,
                                         typename E::Bits* __restrict lanes) {
  using T = typename E::T;
  using Bits = typename E::Bits;
  const std::int64_t c = C > 0 ? C : s.c, n = row / s.oh, oh = row % s.oh;
  const T* image = x + n * s.ih * s.iw * c;
  const Span rows = window_span(oh, g.stride_h, g.pad_top, g.pool_h, s.ih);
  // Each window starts from its first position inside the image (folding it again is a no-op).
  for (std::int64_t ow = 0; ow < s.ow; ++ow) {
    const Span cols = window_span(ow, g.stride_w, g.pad_left, g.pool_w, s.iw);
    std::memcpy(y + ow * c, image + (rows.first * s.iw + cols.first) * c, sizeof(T) * c);
    if constexpr (Argmax)
      std::fill_n(lanes + ow * c, c,
                  static_cast<Bits>((rows.first - rows.origin) * g.pool_w + (cols.first - cols.origin)));
  }
  for (std::int64_t r = rows.first; r < rows.last; ++r)
    for (std::int64_t kw = 0; kw < g.pool_w; ++kw) {
      const auto k = static_cast<Bits>((r - rows.origin) * g.pool_w + kw);
      for (std::int64_t ow = 0; ow < s.ow; ++ow) {
        const std::int64_t q = ow * g.stride_w - g.pad_left + kw;
        if (q < 0 || q >= s.iw) continue;  // padding
        const T* __restrict src = image + (r * s.iw + q) * c;
        T* __restrict yo = y + ow * c;
        Bits* __restrict ao = Argmax ? lanes + ow * c : nullptr;
#pragma omp simd
        for (std::int64_t ch = 0; ch < c; ++ch) {
          const float v = E::wide(src[ch]), m = E::wide(yo[ch]);
          const bool take = v > m || (v != v && m == m);
          const auto keep = static_cast<Bits>(take) - Bits{1};  // all ones where the maximum stays
          const Bits mine = std::bit_cast<Bits>(src[ch]), theirs = std::bit_cast<Bits>(yo[ch]);
          yo[ch] = std::bit_cast<T>(static_cast<Bits>((theirs & keep) | (mine & ~keep)));
          if constexpr (Argmax) ao[ch] = static_cast<Bits>((ao[ch] & keep) | (k & ~keep));
        }
      }
    }
  if constexpr (Argmax)
#pragma omp simd
    for (std::int64_t i = 0; i < s.ow * c; ++i) argmax[i] = static_cast<std::uint8_t>(lanes[i]);
}

// The input rows of output row (n, oh)'s band: each element gets dy where it is its window's
// argmax, 0 elsewhere (between windows included).
template <class E, std::int64_t C>
KERASCPP_SIMD_CLONES_V4 void backward_row(const typename E::T* __restrict dy, const std::uint8_t* __restrict argmax,
                                          const PoolShape& s, const Pool2DGeometry& g, std::int64_t row,
                                          typename E::T* __restrict dx) {
  using T = typename E::T;
  const std::int64_t c = C > 0 ? C : s.c, n = row / s.oh, oh = row % s.oh;
  const Span rows = band_span(oh, s.oh, g.stride_h, g.pad_top, s.ih);
  for (std::int64_t r = rows.first; r < rows.last; ++r) {
    T* __restrict dx_row = dx + (n * s.ih + r) * s.iw * c;
    const std::int64_t kh = r - rows.origin;
    if (kh < 0 || kh >= g.pool_h) {  // a row between windows
      std::memset(dx_row, 0, sizeof(T) * s.iw * c);
      continue;
    }
    for (std::int64_t ow = 0; ow < s.ow; ++ow) {
      const Span cols = band_span(ow, s.ow, g.stride_w, g.pad_left, s.iw);
      const T* __restrict g_o = dy + ow * c;
      const std::uint8_t* __restrict a_o = argmax + ow * c;
      for (std::int64_t q = cols.first; q < cols.last; ++q) {
        const std::int64_t kw = q - cols.origin;
        T* __restrict out = dx_row + q * c;
        if (kw < 0 || kw >= g.pool_w) {
          std::memset(out, 0, sizeof(T) * c);
          continue;
        }
        const auto k = static_cast<std::uint8_t>(kh * g.pool_w + kw);
#pragma omp simd
        for (std::int64_t ch = 0; ch < c; ++ch) out[ch] = a_o[ch] == k ? g_o[ch] : T{0};
      }
    }
  }
}

template <class E, std::int64_t C>
void forward(const typename E::T* x, const PoolShape& s, const Pool2DGeometry& g, typename E::T* y,
             std::uint8_t* argmax, bool relu, DType dtype) {
  const std::int64_t row_elements = s.ow * s.c;
  parallel_for(s.n * s.oh, row_grain(s, g), [&](std::int64_t begin, std::int64_t end) {
    thread_local std::vector<typename E::Bits> lanes;  // one row's argmax (forward_row)
    if (argmax) lanes.resize(static_cast<std::size_t>(row_elements));
    for (std::int64_t row = begin; row < end; ++row) {
      typename E::T* y_row = y + row * row_elements;
      if (argmax) forward_row<E, C, true>(x, s, g, row, y_row, argmax + row * row_elements, lanes.data());
      else forward_row<E, C, false>(x, s, g, row, y_row, nullptr, nullptr);
      if (!relu) continue;
      if constexpr (std::is_same_v<typename E::T, float>) relu_keep_nan_serial(y_row, row_elements);
      else relu_keep_nan_serial(y_row, dtype, row_elements);
    }
  });
}

template <class E, std::int64_t C>
void backward(const typename E::T* dy, const std::uint8_t* argmax, const PoolShape& s, const Pool2DGeometry& g,
              const typename E::T* relu_y, DType dtype, typename E::T* dx, const ChannelSums* sums) {
  using T = typename E::T;
  const std::int64_t row_elements = s.ow * s.c, grain = row_grain(s, g);
  double* partials = nullptr;
  if (sums) {
    sums->partials.assign(static_cast<std::size_t>((s.n * s.oh + grain - 1) / grain * s.c), 0.0);
    partials = sums->partials.data();
  }
  parallel_for(s.n * s.oh, grain, [&](std::int64_t begin, std::int64_t end) {
    const T* grad = dy + begin * row_elements;
    if (relu_y) {
      // The block's gradients through the ReLU, into a buffer that stays in cache (a block is
      // about kElementGrain input elements, so a few thousand outputs).
      thread_local std::vector<T> masked;
      const std::int64_t n = (end - begin) * row_elements;
      masked.resize(static_cast<std::size_t>(n));
      if constexpr (std::is_same_v<T, float>)
        relu_backward_keep_nan_serial(relu_y + begin * row_elements, grad, masked.data(), n);
      else relu_backward_keep_nan_serial(relu_y + begin * row_elements, grad, masked.data(), dtype, n);
      grad = masked.data();
      if constexpr (std::is_same_v<T, float>)
        if (partials) add_rows(grad, 0, (end - begin) * s.ow, s.c, partials + begin / grain * s.c);
    }
    for (std::int64_t row = begin; row < end; ++row)
      backward_row<E, C>(grad + (row - begin) * row_elements, argmax + row * row_elements, s, g, row, dx);
  });
  if (!sums) return;
  std::fill(sums->out, sums->out + s.c, 0.0);
  for (std::int64_t b = 0; b < (s.n * s.oh + grain - 1) / grain; ++b)
    for (std::int64_t ch = 0; ch < s.c; ++ch) sums->out[ch] += partials[b * s.c + ch];
}

// The channel counts of common networks get their own builds (C), any other runs the general one.
template <class E, class Run>
void with_channels(std::int64_t c, Run&& run) {
  switch (c) {
    case 16:
      return run.template operator()<E, 16>();
    case 32:
      return run.template operator()<E, 32>();
    case 64:
      return run.template operator()<E, 64>();
    case 128:
      return run.template operator()<E, 128>();
    default:
      return run.template operator()<E, 0>();
  }
}

}  // namespace

bool max_pool_disjoint_applies(const Pool2DGeometry& g, DType dtype) {
  return g.kind == PoolKind::max && (dtype == DType::float32 || dtype == DType::bfloat16) && g.pool_h >= 1 &&
         g.pool_w >= 1 && g.stride_h >= g.pool_h && g.stride_w >= g.pool_w && g.pool_h * g.pool_w <= 255 &&
         g.pad_top < g.pool_h && g.pad_bottom < g.pool_h && g.pad_left < g.pool_w && g.pad_right < g.pool_w;
}

void max_pool_disjoint_forward(const void* x, const PoolShape& s, const Pool2DGeometry& g, DType dtype, void* y,
                               std::uint8_t* argmax, bool relu) {
  auto run = [&]<class E, std::int64_t C>() {
    using T = typename E::T;
    forward<E, C>(static_cast<const T*>(x), s, g, static_cast<T*>(y), argmax, relu, dtype);
  };
  if (dtype == DType::float32) with_channels<Float32>(s.c, run);
  else with_channels<BFloat16>(s.c, run);
}

void max_pool_disjoint_backward(const void* dy, const std::uint8_t* argmax, const PoolShape& s, const Pool2DGeometry& g,
                                DType dtype, void* dx, const void* relu_y, const ChannelSums* channel_sums) {
  KERASCPP_CHECK_STATE(!channel_sums || (dtype == DType::float32 && relu_y),
                       "max_pool_disjoint_backward: channel sums are taken on float32 through a ReLU only");
  auto run = [&]<class E, std::int64_t C>() {
    using T = typename E::T;
    backward<E, C>(static_cast<const T*>(dy), argmax, s, g, static_cast<const T*>(relu_y), dtype, static_cast<T*>(dx),
                   channel_sums);
  };
  if (dtype == DType::float32) with_channels<Float32>(s.c, run);
  else with_channels<BFloat16>(s.c, run);
}

}  // namespace kerascpp::cpu
