// pooling_nd: run_layer_test for MaxPooling1D/3D and AveragePooling1D/3D (and an alias), and their
// outputs against a direct loop over each window in double (padding excluded from the means).
#include <algorithm>
#include <cmath>
#include <limits>

#include "expect_layer_passes.hpp"
#include "layer_on_cpu.hpp"

TEST_CASE("layer test: MaxPooling1D") {
  expect_layer_passes({.make = [] { return K::LayerRef(K::layers::MaxPooling1D(2)); },
                       .input_shapes = {{5, 2}},
                       .expected_output_shape = K::Shape{2, 2},
                       .expected_trainable_weights = 0,
                       .expected_non_trainable_weights = 0});
}

TEST_CASE("layer test: AveragePooling1D same") {
  expect_layer_passes(
      {.make = [] { return K::LayerRef(K::layers::AvgPool1D(3, {.strides = 2, .padding = K::Padding::same})); },
       .input_shapes = {{5, 2}},
       .expected_output_shape = K::Shape{3, 2},
       .expected_trainable_weights = 0,
       .expected_non_trainable_weights = 0});
}

TEST_CASE("layer test: MaxPooling3D") {
  expect_layer_passes({.make = [] { return K::LayerRef(K::layers::MaxPooling3D({2, 1, 2})); },
                       .input_shapes = {{2, 3, 4, 2}},
                       .expected_output_shape = K::Shape{1, 3, 2, 2},
                       .expected_trainable_weights = 0,
                       .expected_non_trainable_weights = 0});
}

TEST_CASE("layer test: AveragePooling3D same") {
  expect_layer_passes({.make =
                           [] {
                             return K::LayerRef(
                                 K::layers::AveragePooling3D(2, {.strides = {1, 2, 2}, .padding = K::Padding::same}));
                           },
                       .input_shapes = {{2, 3, 3, 1}},
                       .expected_output_shape = K::Shape{2, 2, 2, 1},
                       .expected_trainable_weights = 0,
                       .expected_non_trainable_weights = 0});
}

namespace {

// The 3-D pooling of x (N, D, H, W, C) written out: each window's max or mean over the positions
// inside the input ("same": the TensorFlow split of the padding, extra at the end).
std::vector<double> reference_pool3d(const K::Tensor& x, bool max, const std::vector<std::int64_t>& k,
                                     const std::vector<std::int64_t>& s, bool same, K::Shape& out) {
  const K::Shape& in = x.shape();
  out = {in[0]};
  std::vector<std::int64_t> pad(3, 0);
  for (std::size_t a = 0; a < 3; ++a) {
    const std::int64_t n = in[a + 1];
    const std::int64_t o = same ? (n + s[a] - 1) / s[a] : (n - k[a]) / s[a] + 1;
    pad[a] = same ? std::max<std::int64_t>((o - 1) * s[a] + k[a] - n, 0) / 2 : 0;
    out.push_back(o);
  }
  out.push_back(in[4]);
  const auto xv = x.to_vector();
  std::vector<double> y;
  for (std::int64_t b = 0; b < out[0]; ++b)
    for (std::int64_t od = 0; od < out[1]; ++od)
      for (std::int64_t oh = 0; oh < out[2]; ++oh)
        for (std::int64_t ow = 0; ow < out[3]; ++ow)
          for (std::int64_t c = 0; c < out[4]; ++c) {
            double best = -std::numeric_limits<double>::infinity(), sum = 0;
            int count = 0;
            for (std::int64_t i = 0; i < k[0]; ++i)
              for (std::int64_t j = 0; j < k[1]; ++j)
                for (std::int64_t l = 0; l < k[2]; ++l) {
                  const std::int64_t d = od * s[0] + i - pad[0], h = oh * s[1] + j - pad[1], w = ow * s[2] + l - pad[2];
                  if (d < 0 || h < 0 || w < 0 || d >= in[1] || h >= in[2] || w >= in[3]) continue;
                  const double v = xv[static_cast<std::size_t>(layer_on_cpu::offset(in, {b, d, h, w, c}))];
                  best = std::max(best, v);
                  sum += v;
                  ++count;
                }
            y.push_back(max ? best : sum / count);
          }
  return y;
}

}  // namespace

TEST_CASE("MaxPooling3D, AveragePooling3D and AveragePooling1D: each window's max or mean") {
  using namespace layer_on_cpu;
  const K::Tensor x =
      tensor_of({2, 5, 4, 5, 3}, [](std::int64_t i) { return std::sin(0.37f * static_cast<float>(i)) * 2.f; });
  struct Case {
    bool max;
    std::vector<std::int64_t> k, s;
    bool same;
  };
  for (const Case& c : {Case{true, {2, 2, 2}, {2, 2, 2}, false}, Case{false, {3, 2, 3}, {2, 1, 2}, true},
                        Case{true, {2, 3, 2}, {1, 2, 3}, true}, Case{false, {2, 2, 2}, {1, 1, 1}, false}}) {
    CAPTURE(c.max);
    CAPTURE(c.same);
    for (bool training : {false, true}) {
      Replica rep(training);
      const K::Padding padding = c.same ? K::Padding::same : K::Padding::valid;
      const K::Size3D pool(c.k[0], c.k[1], c.k[2]), strides(c.s[0], c.s[1], c.s[2]);
      K::LayerRef layer = c.max ? K::layers::MaxPooling3D(pool, {.strides = strides, .padding = padding})
                                : K::layers::AveragePooling3D(pool, {.strides = strides, .padding = padding});
      K::LayerState st;
      const K::Tensor y = forward(rep, layer, {x}, st).at(0);
      K::Shape want_shape;
      const auto want = reference_pool3d(x, c.max, c.k, c.s, c.same, want_shape);
      REQUIRE(y.shape() == want_shape);
      const auto yv = y.to_vector();
      for (std::size_t i = 0; i < want.size(); ++i) CHECK(yv[i] == doctest::Approx(want[i]).epsilon(1e-6));
    }
  }
  // 1-D: a sequence is a 3-D input with depth and height 1.
  Replica rep;
  const K::Tensor seq = tensor_of({2, 7, 3}, [](std::int64_t i) { return std::cos(0.5f * static_cast<float>(i)); });
  K::LayerState st;
  const K::Tensor y =
      forward(rep, K::layers::AveragePooling1D(3, {.strides = 2, .padding = K::Padding::same}), {seq}, st).at(0);
  K::Shape want_shape;
  const auto want = reference_pool3d(seq.reshape({2, 1, 1, 7, 3}), false, {1, 1, 3}, {1, 1, 2}, true, want_shape);
  REQUIRE(y.shape() == K::Shape{2, 4, 3});
  const auto yv = y.to_vector();
  for (std::size_t i = 0; i < want.size(); ++i) CHECK(yv[i] == doctest::Approx(want[i]).epsilon(1e-6));
}
