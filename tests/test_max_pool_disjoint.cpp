// The CPU backend's max pooling over disjoint windows (backend/cpu/max_pool_disjoint.*): against
// a plain loop that states the semantics (first maximal position in row-major window order,
// padding excluded, a window holding NaN gives its first NaN and routes the gradient there), and
// against oneDNN's own pooling primitives bit for bit on NaN-free data with many ties, for the
// geometries Keras layers produce: exact tiling, a remainder, gaps between windows, "same"
// padding, channel counts off the vector width and the counts with builds of their own (16, 32,
// 64, 128); float32, and bfloat16 where the CPU backend keeps
// 16-bit activations (a processor with native bfloat16: AVX512-BF16 or AMX).
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <oneapi/dnnl/dnnl.hpp>
#include <random>
#include <string>
#include <vector>

#include "backend/cpu/cpu_backend.hpp"
#include "backend/cpu/max_pool_disjoint.hpp"
#include "kerascpp/kerascpp.hpp"

namespace K = kerascpp;

namespace {

struct Case {
  std::int64_t n, ih, iw, c;
  K::Pool2DGeometry g;
  std::string name;
};

K::Pool2DGeometry geometry(std::int64_t pool, std::int64_t stride, std::int64_t pad_tl = 0, std::int64_t pad_br = 0) {
  K::Pool2DGeometry g;
  g.kind = K::PoolKind::max;
  g.pool_h = g.pool_w = pool;
  g.stride_h = g.stride_w = stride;
  g.pad_top = g.pad_left = pad_tl;
  g.pad_bottom = g.pad_right = pad_br;
  return g;
}

std::vector<Case> cases() {
  return {{2, 8, 8, 32, geometry(2, 2), "2x2 stride 2, 32 channels"},
          {3, 7, 9, 5, geometry(2, 2), "2x2 stride 2 with a remainder row and column, 5 channels"},
          {2, 10, 10, 37, geometry(3, 3), "3x3 stride 3, a remainder, 37 channels"},
          {2, 11, 11, 3, geometry(2, 3), "2x2 stride 3: gaps between windows"},
          {2, 7, 7, 17, geometry(2, 2, 0, 1), "2x2 'same' (bottom/right padding)"},
          {1, 9, 9, 16, geometry(3, 3, 1, 1), "3x3 stride 3 with padding on every side"},
          {2, 5, 6, 1, geometry(1, 1), "1x1: the identity"},
          {1, 6, 6, 64, geometry(2, 2, 0, 1), "2x2 'same', 64 channels"},
          {1, 5, 4, 128, geometry(2, 2), "2x2, 128 channels"}};
}

std::int64_t out_extent(std::int64_t in, std::int64_t pool, std::int64_t stride, std::int64_t pad_a,
                        std::int64_t pad_b) {
  return (in + pad_a + pad_b - pool) / stride + 1;
}

// The semantics, one element at a time.
void reference(const Case& k, const std::vector<float>& x, const std::vector<float>& dy, std::vector<float>& y,
               std::vector<float>& dx) {
  const auto& g = k.g;
  const std::int64_t oh = out_extent(k.ih, g.pool_h, g.stride_h, g.pad_top, g.pad_bottom);
  const std::int64_t ow = out_extent(k.iw, g.pool_w, g.stride_w, g.pad_left, g.pad_right);
  y.assign(static_cast<std::size_t>(k.n * oh * ow * k.c), 0.f);
  dx.assign(x.size(), 0.f);
  auto at = [&](std::int64_t n, std::int64_t r, std::int64_t q, std::int64_t ch) {
    return static_cast<std::size_t>(((n * k.ih + r) * k.iw + q) * k.c + ch);
  };
  for (std::int64_t n = 0; n < k.n; ++n)
    for (std::int64_t i = 0; i < oh; ++i)
      for (std::int64_t j = 0; j < ow; ++j)
        for (std::int64_t ch = 0; ch < k.c; ++ch) {
          std::size_t best = 0;
          bool any = false;
          for (std::int64_t a = 0; a < g.pool_h; ++a)
            for (std::int64_t b = 0; b < g.pool_w; ++b) {
              const std::int64_t r = i * g.stride_h - g.pad_top + a, q = j * g.stride_w - g.pad_left + b;
              if (r < 0 || r >= k.ih || q < 0 || q >= k.iw) continue;
              const std::size_t e = at(n, r, q, ch);
              const bool take = !any || x[e] > x[best] || (std::isnan(x[e]) && !std::isnan(x[best]));
              if (take) best = e;
              any = true;
            }
          REQUIRE(any);
          const auto o = static_cast<std::size_t>(((n * oh + i) * ow + j) * k.c + ch);
          y[o] = x[best];
          dx[best] += dy[o];
        }
}

// Gradients that tell positions apart: 1 + (i % period) * step for output i (exact in bfloat16).
std::vector<float> distinct_gradients(const Case& k, int period, float step) {
  const std::int64_t oh = out_extent(k.ih, k.g.pool_h, k.g.stride_h, k.g.pad_top, k.g.pad_bottom);
  const std::int64_t ow = out_extent(k.iw, k.g.pool_w, k.g.stride_w, k.g.pad_left, k.g.pad_right);
  std::vector<float> dy(static_cast<std::size_t>(k.n * oh * ow * k.c));
  for (std::size_t i = 0; i < dy.size(); ++i) dy[i] = 1.f + static_cast<float>(i % period) * step;
  return dy;
}

std::vector<float> tied_values(std::size_t count, std::uint32_t seed) {
  // Few distinct values, a quarter of them 0 (ReLU outputs): many windows hold ties.
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> pick(-2, 5);
  std::vector<float> v(count);
  for (auto& e : v) e = std::max(0, pick(rng)) * 0.5f;
  return v;
}

std::vector<std::uint32_t> bits(const std::vector<float>& v) {
  std::vector<std::uint32_t> out(v.size());
  std::memcpy(out.data(), v.data(), v.size() * sizeof(float));
  return out;
}

struct Pooled {
  std::vector<float> y, dx;
};

Pooled run_backend(K::Backend& be, const Case& k, const std::vector<float>& x, const std::vector<float>& dy,
                   K::DType dtype) {
  // 16-bit activations need the compute dtype set, as the graph sets it around a layer.
  be.set_compute_dtype(dtype);
  K::Tensor xt, dyt, y, ws, dx;
  be.cast(K::Tensor::from_vector({k.n, k.ih, k.iw, k.c}, x), dtype, xt);
  be.pool2d_forward(xt, k.g, y, ws);
  be.cast(K::Tensor::from_vector(y.shape(), dy), dtype, dyt);
  be.pool2d_backward(dyt, xt, k.g, ws, dx);
  K::Tensor y32, dx32;
  be.cast(y, K::DType::float32, y32);
  be.cast(dx, K::DType::float32, dx32);
  be.set_compute_dtype(K::DType::float32);
  return {y32.to_vector(), dx32.to_vector()};
}

// oneDNN's forward_training and backward pooling primitives, NHWC float32.
Pooled run_onednn(const Case& k, std::vector<float> x, std::vector<float> dy) {
  using md = dnnl::memory::desc;
  const auto& g = k.g;
  const std::int64_t oh = out_extent(k.ih, g.pool_h, g.stride_h, g.pad_top, g.pad_bottom);
  const std::int64_t ow = out_extent(k.iw, g.pool_w, g.stride_w, g.pad_left, g.pad_right);
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream st(eng);
  md src({k.n, k.c, k.ih, k.iw}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::nhwc);
  md dst({k.n, k.c, oh, ow}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::nhwc);
  const dnnl::memory::dims strides{g.stride_h, g.stride_w}, kernel{g.pool_h, g.pool_w}, pad_l{g.pad_top, g.pad_left},
      pad_r{g.pad_bottom, g.pad_right};
  dnnl::pooling_forward::primitive_desc fwd(
      dnnl::pooling_forward::desc(dnnl::prop_kind::forward_training, dnnl::algorithm::pooling_max, src, dst, strides,
                                  kernel, pad_l, pad_r),
      eng);
  dnnl::pooling_backward::primitive_desc bwd(
      dnnl::pooling_backward::desc(dnnl::algorithm::pooling_max, src, dst, strides, kernel, pad_l, pad_r), eng, fwd);
  Pooled out{std::vector<float>(static_cast<std::size_t>(k.n * oh * ow * k.c)), std::vector<float>(x.size())};
  dnnl::memory mx(src, eng, x.data()), my(dst, eng, out.y.data()), mws(fwd.workspace_desc(), eng);
  dnnl::memory mdy(dst, eng, dy.data()), mdx(src, eng, out.dx.data());
  dnnl::pooling_forward(fwd).execute(st, {{DNNL_ARG_SRC, mx}, {DNNL_ARG_DST, my}, {DNNL_ARG_WORKSPACE, mws}});
  dnnl::pooling_backward(bwd).execute(st,
                                      {{DNNL_ARG_DIFF_DST, mdy}, {DNNL_ARG_DIFF_SRC, mdx}, {DNNL_ARG_WORKSPACE, mws}});
  st.wait();
  return out;
}

}  // namespace

TEST_CASE("max pooling over disjoint windows: the stated semantics and oneDNN's bits, ties included" *
          doctest::test_suite("16-bit activations")) {
  K::cpu::CpuBackend be(2);
  const bool bf16 = be.low_precision_activations(K::DType::bfloat16);
  if (!bf16) MESSAGE("bfloat16 part skipped: this processor has no native bfloat16, so activations stay float32");
  std::uint32_t seed = 7;
  for (const Case& k : cases()) {
    CAPTURE(k.name);
    REQUIRE(K::cpu::max_pool_disjoint_applies(k.g, K::DType::float32));
    const auto x = tied_values(static_cast<std::size_t>(k.n * k.ih * k.iw * k.c), seed++);
    const auto dy = distinct_gradients(k, 97, 0.25f);
    std::vector<float> y_ref, dx_ref;
    reference(k, x, dy, y_ref, dx_ref);
    const Pooled mine = run_backend(be, k, x, dy, K::DType::float32);
    CHECK(bits(mine.y) == bits(y_ref));
    CHECK(bits(mine.dx) == bits(dx_ref));
    const Pooled theirs = run_onednn(k, x, dy);
    CHECK(bits(mine.y) == bits(theirs.y));
    CHECK(bits(mine.dx) == bits(theirs.dx));
    // bfloat16: these values and gradients are exact in 8 bits of mantissa.
    if (!bf16) continue;
    const Pooled half = run_backend(be, k, x, dy, K::DType::bfloat16);
    CHECK(bits(half.y) == bits(y_ref));
    CHECK(bits(half.dx) == bits(dx_ref));
  }
}

TEST_CASE("max pooling over disjoint windows: a window holding NaN gives NaN and routes its gradient to it" *
          doctest::test_suite("16-bit activations")) {
  K::cpu::CpuBackend be(2);
  std::vector<K::DType> dtypes{K::DType::float32};
  if (be.low_precision_activations(K::DType::bfloat16)) dtypes.push_back(K::DType::bfloat16);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const Case& k : cases()) {
    CAPTURE(k.name);
    auto x = tied_values(static_cast<std::size_t>(k.n * k.ih * k.iw * k.c), 99);
    for (std::size_t i = 3; i < x.size(); i += 11) x[i] = nan;
    x[0] = -std::numeric_limits<float>::infinity();
    const auto dy = distinct_gradients(k, 89, 0.5f);
    std::vector<float> y_ref, dx_ref;
    reference(k, x, dy, y_ref, dx_ref);
    for (auto dtype : dtypes) {
      CAPTURE(K::dtype_name(dtype));
      const Pooled mine = run_backend(be, k, x, dy, dtype);
      REQUIRE(mine.y.size() == y_ref.size());
      int nan_windows = 0;
      for (std::size_t i = 0; i < y_ref.size(); ++i) {
        CHECK(std::isnan(mine.y[i]) == std::isnan(y_ref[i]));
        if (std::isnan(y_ref[i])) ++nan_windows;
        else CHECK(mine.y[i] == y_ref[i]);
      }
      CHECK(nan_windows > 0);
      CHECK(bits(mine.dx) == bits(dx_ref));
    }
  }
}

TEST_CASE("max pooling: overlapping windows, 3x3 stride 2, stay on oneDNN") {
  K::Pool2DGeometry g = geometry(3, 2);
  CHECK_FALSE(K::cpu::max_pool_disjoint_applies(g, K::DType::float32));
  CHECK_FALSE(K::cpu::max_pool_disjoint_applies(geometry(2, 2), K::DType::float16));
  g.kind = K::PoolKind::average;
  g.stride_h = g.stride_w = 3;
  CHECK_FALSE(K::cpu::max_pool_disjoint_applies(g, K::DType::float32));
}
