// NaN-propagating ReLU and max pooling (see nan_propagation.hpp for why oneDNN's are not used).
#include "backend/cpu/nan_propagation.hpp"

#include <algorithm>
#include <limits>

#include "backend/cpu/low_precision_conversions.hpp"
#include "backend/cpu/parallel.hpp"
#include "simd_clones.hpp"

namespace kerascpp::cpu {

namespace {

// These loops are memory-bound on large outputs but run from L1/L2 on the MLP's, where AVX2 and
// AVX-512 halve the instructions; the loader picks the widest build (as for the optimizer
// updates). The results are exact, so every build gives the same bits.

// `v <= 0` is false for NaN, so NaN passes through; -0 <= 0 gives +0 like max(-0, 0) in oneDNN.
KERASCPP_SIMD_CLONES void relu_block(const float* x, float* y, std::int64_t n) {
#pragma omp simd
  for (std::int64_t i = 0; i < n; ++i) y[i] = x[i] <= 0.f ? 0.f : x[i];
}

// dy - dy is +0 for finite dy and NaN for NaN/Inf: TensorFlow's dy * 0 without its -0.
KERASCPP_SIMD_CLONES void relu_backward_block(const float* y, const float* dy, float* dx, std::int64_t n) {
#pragma omp simd
  for (std::int64_t i = 0; i < n; ++i) dx[i] = y[i] > 0.f ? dy[i] : dy[i] - dy[i];
}

KERASCPP_SIMD_CLONES int nan_in_block(const float* x, std::int64_t n) {
  int found = 0;
#pragma omp simd reduction(| : found)
  for (std::int64_t i = 0; i < n; ++i) found |= static_cast<int>(x[i] != x[i]);
  return found;
}

// `x < +Inf` is false exactly for NaN and +Inf.
KERASCPP_SIMD_CLONES int nan_or_inf_in_block(const float* x, std::int64_t n) {
  const float inf = std::numeric_limits<float>::infinity();
  int found = 0;
#pragma omp simd reduction(| : found)
  for (std::int64_t i = 0; i < n; ++i) found |= static_cast<int>(!(x[i] < inf));
  return found;
}

// The bits of +Inf; a 16-bit float is NaN exactly when its bits without the sign exceed them.
std::uint16_t inf_bits(DType dtype) { return dtype == DType::bfloat16 ? 0x7F80 : 0x7C00; }

// relu on the bits: a negative non-NaN value (-0 and -Inf included) becomes +0.
KERASCPP_SIMD_CLONES void relu16_block(std::uint16_t* y, std::uint16_t inf, std::int64_t n) {
#pragma omp simd
  for (std::int64_t i = 0; i < n; ++i) {
    const std::uint16_t v = y[i];
    y[i] = (v & 0x8000) && (v & 0x7FFF) <= inf ? std::uint16_t{0} : v;
  }
}

// The ReLU's backward on the bits of bfloat16: what widening to float32, relu_backward_block and
// narrowing back give, without the conversions (they took more than half the pass's time).
// y > 0 is 0 < bits <= +Inf (0x7F80); widening and narrowing return a non-NaN unchanged and a
// NaN made quiet (0x0040 set); dy - dy is +0 for a finite dy, x86's default NaN (0xFFC0 in
// bfloat16) for an infinite one and the quiet dy for a NaN.
KERASCPP_SIMD_CLONES void relu_backward_bf16_block(const std::uint16_t* y, const std::uint16_t* dy, std::uint16_t* dx,
                                                   std::int64_t n) {
  constexpr std::uint16_t inf = 0x7F80, quiet = 0x0040, indefinite = 0xFFC0;
#pragma omp simd
  for (std::int64_t i = 0; i < n; ++i) {
    const std::uint16_t g = dy[i], magnitude = g & 0x7FFF;
    const bool positive = static_cast<std::uint16_t>(y[i] - 1) < inf;  // 0 wraps to 0xFFFF
    const std::uint16_t kept = magnitude > inf ? static_cast<std::uint16_t>(g | quiet) : g;
    const std::uint16_t blocked = magnitude > inf ? kept : magnitude == inf ? indefinite : std::uint16_t{0};
    dx[i] = positive ? kept : blocked;
  }
}

KERASCPP_SIMD_CLONES int nan16_in_block(const std::uint16_t* x, std::uint16_t inf, std::int64_t n) {
  int found = 0;
#pragma omp simd reduction(| : found)
  for (std::int64_t i = 0; i < n; ++i) found |= static_cast<int>((x[i] & 0x7FFF) > inf);
  return found;
}

}  // namespace

void relu_keep_nan(std::uint16_t* y, DType dtype, std::int64_t n) {
  const std::uint16_t inf = inf_bits(dtype);
  parallel_for(n, kElementGrain, [&](std::int64_t b, std::int64_t e) { relu16_block(y + b, inf, e - b); });
}

void relu_keep_nan_serial(std::uint16_t* y, DType dtype, std::int64_t n) { relu16_block(y, inf_bits(dtype), n); }

void relu_keep_nan_serial(float* y, std::int64_t n) { relu_block(y, y, n); }

void relu_backward_keep_nan(const std::uint16_t* y, const std::uint16_t* dy, std::uint16_t* dx, DType dtype,
                            std::int64_t n) {
  parallel_for(n, kElementGrain, [&](std::int64_t b, std::int64_t e) {
    relu_backward_keep_nan_serial(y + b, dy + b, dx + b, dtype, e - b);
  });
}

void relu_backward_keep_nan_serial(const std::uint16_t* y, const std::uint16_t* dy, std::uint16_t* dx, DType dtype,
                                   std::int64_t n) {
  if (dtype == DType::bfloat16) return relu_backward_bf16_block(y, dy, dx, n);
  // float16: through float32, a cache-sized tile at a time. (No CPU here keeps float16
  // activations with oneDNN 2.6, so the bit version above is only built, and tested, for bfloat16.)
  constexpr std::int64_t kTile = 1024;
  alignas(64) float wide_y[kTile], wide_dy[kTile];
  for (std::int64_t i = 0; i < n; i += kTile) {
    const std::int64_t m = std::min(kTile, n - i);
    widen_floats(y + i, dtype, wide_y, m);
    widen_floats(dy + i, dtype, wide_dy, m);
    relu_backward_block(wide_y, wide_dy, wide_dy, m);
    narrow_floats(wide_dy, dx + i, dtype, m);
  }
}

bool contains_nan(const std::uint16_t* x, DType dtype, std::int64_t n) {
  if (n <= 0) return false;
  const std::uint16_t inf = inf_bits(dtype);
  const std::int64_t blocks = (n + kElementGrain - 1) / kElementGrain;
  int found = 0;
#pragma omp parallel for schedule(static) reduction(| : found) if (blocks > 1)
  for (std::int64_t b = 0; b < blocks; ++b) {
    const std::int64_t begin = b * kElementGrain;
    found |= nan16_in_block(x + begin, inf, std::min(n, begin + kElementGrain) - begin);
  }
  return found != 0;
}

void relu_keep_nan(const float* x, float* y, std::int64_t n) {
  parallel_for(n, kElementGrain, [&](std::int64_t b, std::int64_t e) { relu_block(x + b, y + b, e - b); });
}

void relu_keep_nan(float* y, std::int64_t n) { relu_keep_nan(y, y, n); }

void relu_backward_keep_nan(const float* y, const float* dy, float* dx, std::int64_t n) {
  parallel_for(n, kElementGrain,
               [&](std::int64_t b, std::int64_t e) { relu_backward_keep_nan_serial(y + b, dy + b, dx + b, e - b); });
}

void relu_backward_keep_nan_serial(const float* y, const float* dy, float* dx, std::int64_t n) {
  relu_backward_block(y, dy, dx, n);
}

void relu_backward_narrow(const float* y, const float* dy, std::uint16_t* dz, DType to, std::int64_t n) {
  parallel_for(n, kElementGrain, [&](std::int64_t b, std::int64_t e) {
    // The float32 gradient lives only in this cache-sized tile on its way to 16 bits.
    constexpr std::int64_t kTile = 1024;
    alignas(64) float tile[kTile];
    for (std::int64_t i = b; i < e; i += kTile) {
      const std::int64_t m = std::min(kTile, e - i);
      relu_backward_block(y + i, dy + i, tile, m);
      narrow_floats(tile, dz + i, to, m);
    }
  });
}

bool contains_nan(const float* x, std::int64_t n) {
  if (n <= 0) return false;
  const std::int64_t blocks = (n + kElementGrain - 1) / kElementGrain;
  int found = 0;
#pragma omp parallel for schedule(static) reduction(| : found) if (blocks > 1)
  for (std::int64_t b = 0; b < blocks; ++b) {
    const std::int64_t begin = b * kElementGrain;
    found |= nan_in_block(x + begin, std::min(n, begin + kElementGrain) - begin);
  }
  return found != 0;
}

void softmax_nan_rows(const float* x, std::int64_t rows, std::int64_t cols, std::vector<std::int64_t>& out) {
  out.clear();
  // Softmax inputs are logits, [batch, classes]: small, so one serial pass, then rows only if needed.
  if (rows <= 0 || cols <= 0 || !nan_or_inf_in_block(x, rows * cols)) return;
  for (std::int64_t r = 0; r < rows; ++r)
    if (nan_or_inf_in_block(x + r * cols, cols)) out.push_back(r);
}

void fill_rows_nan(float* y, const std::vector<std::int64_t>& rows, std::int64_t cols) {
  for (std::int64_t r : rows) std::fill(y + r * cols, y + (r + 1) * cols, std::numeric_limits<float>::quiet_NaN());
}

void max_pool_mark_nan(const float* x, const op_shapes::PoolShape& s, const Pool2DGeometry& g, float* y) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::int64_t C = s.c;
  // One output row (n, oh) per iteration; windows are clipped to the input (padding holds no
  // values, as in oneDNN and Keras).
#pragma omp parallel for schedule(static)
  for (std::int64_t row = 0; row < s.n * s.oh; ++row) {
    const std::int64_t n = row / s.oh, oh = row % s.oh;
    const std::int64_t h0 = std::max<std::int64_t>(0, oh * g.stride_h - g.pad_top);
    const std::int64_t h1 = std::min(s.ih, oh * g.stride_h - g.pad_top + g.pool_h);
    for (std::int64_t ow = 0; ow < s.ow; ++ow) {
      const std::int64_t w0 = std::max<std::int64_t>(0, ow * g.stride_w - g.pad_left);
      const std::int64_t w1 = std::min(s.iw, ow * g.stride_w - g.pad_left + g.pool_w);
      float* out = y + ((n * s.oh + oh) * s.ow + ow) * C;
      for (std::int64_t h = h0; h < h1; ++h)
        for (std::int64_t w = w0; w < w1; ++w) {
          const float* in = x + ((n * s.ih + h) * s.iw + w) * C;
          for (std::int64_t c = 0; c < C; ++c)
            if (in[c] != in[c]) out[c] = nan;
        }
    }
  }
}

}  // namespace kerascpp::cpu
