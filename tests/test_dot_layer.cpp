// keras.layers.Dot: output shapes for 2-D and 3-D inputs and every axes form, values against a
// hand-written batch dot, backward against finite differences (with and without normalize),
// the config and shape errors. Forward against Keras 3 itself: tests/python/test_dot_interop.py.
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "kerascpp/kerascpp.hpp"
#include "kerascpp/testing/gradient_check.hpp"

namespace K = kerascpp;

namespace {

K::Tensor dot_random(const K::Shape& shape, std::uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<float> v(static_cast<std::size_t>(K::shape_numel(shape)));
  for (auto& x : v) x = dist(gen);
  return K::Tensor::from_vector(shape, v);
}

struct DotCase {
  K::Shape a, b;  // per-example shapes
  K::LayerRef layer;
  K::Shape out;
};

// Σ_k x[b, .. k ..] y[b, .. k ..] by loops, for 2-D/3-D inputs with resolved axes (batch included).
std::vector<float> reference_dot(const K::Tensor& x, const K::Tensor& y, int ax, int ay) {
  auto at = [](const K::Tensor& t, std::int64_t b, std::int64_t i, std::int64_t j) {
    return t.rank() == 2 ? t.to_vector()[b * t.dim(1) + i] : t.to_vector()[(b * t.dim(1) + i) * t.dim(2) + j];
  };
  // Free index ranges: the other axis of a 3-D input (1 for a 2-D one).
  const std::int64_t k = x.dim(ax), fx = x.rank() == 3 ? x.dim(3 - ax) : 1, fy = y.rank() == 3 ? y.dim(3 - ay) : 1;
  std::vector<float> out;
  for (std::int64_t b = 0; b < x.dim(0); ++b)
    for (std::int64_t i = 0; i < fx; ++i)
      for (std::int64_t j = 0; j < fy; ++j) {
        double s = 0;
        for (std::int64_t kk = 0; kk < k; ++kk) {
          float xv = x.rank() == 2 ? at(x, b, kk, 0) : (ax == 1 ? at(x, b, kk, i) : at(x, b, i, kk));
          float yv = y.rank() == 2 ? at(y, b, kk, 0) : (ay == 1 ? at(y, b, kk, j) : at(y, b, j, kk));
          s += double(xv) * yv;
        }
        out.push_back(static_cast<float>(s));
      }
  return out;
}

}  // namespace

TEST_CASE("Dot: output shapes, values and gradients for 2-D and 3-D inputs and every axes form") {
  auto backend = K::make_cpu_backend(1);
  K::ReplicaContext ctx;
  ctx.backend = backend.get();
  struct Case {
    K::Shape a, b;
    K::LayerRef layer;
    K::Shape out;
    int ax, ay;  // resolved, for the reference
  };
  std::vector<Case> cases = {
      {{4}, {4}, K::layers::Dot(1), {1}, 1, 1},                // (B, 4)·(B, 4) -> (B, 1)
      {{4}, {4}, K::layers::Dot(-1), {1}, 1, 1},               // negative axis
      {{3, 5}, {4, 3}, K::layers::Dot({1, 2}), {5, 4}, 1, 2},  // Keras' docstring example
      {{3, 4}, {5, 4}, K::layers::Dot(-1), {3, 5}, 2, 2},      // -1 % 3 = 2 for both
      {{3, 4}, {3, 5}, K::layers::Dot(1), {4, 5}, 1, 1},       // over the steps
      {{3, 4}, {4}, K::layers::Dot({2, 1}), {3}, 2, 1},        // 3-D · 2-D
      {{4}, {5, 4}, K::layers::Dot({-1, -1}), {5}, 1, 2},      // 2-D · 3-D
      {{4, 3}, {4}, K::layers::Dot({1, -1}), {3}, 1, 1},       // 3-D over axis 1 · 2-D
  };
  int seed = 10;
  for (auto& c : cases) {
    CAPTURE(c.layer->get_config().dump());
    auto a = K::Input(c.a), b = K::Input(c.b);
    CHECK(c.layer({a, b}).shape() == c.out);
    K::Shape sa{2}, sb{2};
    sa.insert(sa.end(), c.a.begin(), c.a.end());
    sb.insert(sb.end(), c.b.begin(), c.b.end());
    K::Tensor xa = dot_random(sa, seed++), xb = dot_random(sb, seed++);
    K::LayerState st;
    K::Tensor y = c.layer->forward(ctx, {xa, xb}, st).at(0);
    K::Shape want{2};
    want.insert(want.end(), c.out.begin(), c.out.end());
    CHECK(y.shape() == want);
    auto ref = reference_dot(xa, xb, c.ax, c.ay), got = y.to_vector();
    REQUIRE(ref.size() == got.size());
    for (std::size_t i = 0; i < ref.size(); ++i) CHECK(got[i] == doctest::Approx(ref[i]).epsilon(1e-5));
    auto r = K::testing::check_layer_gradients(ctx, c.layer, {xa, xb});
    CHECK_MESSAGE(r.passed(), r.summary());
  }
}

TEST_CASE("Dot(normalize=true): cosine similarity, and its gradient") {
  auto backend = K::make_cpu_backend(1);
  K::ReplicaContext ctx;
  ctx.backend = backend.get();
  for (auto axes : {std::pair{1, 1}, std::pair{1, 2}, std::pair{2, 2}}) {
    CAPTURE(axes.first);
    CAPTURE(axes.second);
    K::LayerRef dot = K::layers::Dot(axes, {.normalize = true});
    auto a = K::Input({3, 3}), b = K::Input({3, 3});
    dot({a, b});
    K::Tensor xa = dot_random({2, 3, 3}, 40), xb = dot_random({2, 3, 3}, 41);
    K::LayerState st;
    for (float v : dot->forward(ctx, {xa, xb}, st).at(0).to_vector()) CHECK(std::fabs(v) <= 1.f + 1e-6f);
    auto r = K::testing::check_layer_gradients(ctx, dot, {xa, xb});
    CHECK_MESSAGE(r.passed(), r.summary());
  }
  // 2-D: the cosine of two vectors; a zero vector gives 0, as Keras' rsqrt clamped at 1/epsilon.
  K::LayerRef dot = K::layers::Dot(1, {.normalize = true});
  dot({K::Input({2}), K::Input({2})});
  K::LayerState st;
  auto y = dot->forward(ctx,
                        {K::Tensor::from_vector({2, 2}, std::vector<float>{3, 4, 0, 0}),
                         K::Tensor::from_vector({2, 2}, std::vector<float>{4, 3, 1, 1})},
                        st)
               .at(0)
               .to_vector();
  CHECK(y[0] == doctest::Approx(24.0 / 25.0));
  CHECK(y[1] == 0.f);
}

TEST_CASE("Dot: config as Keras writes it, and shape errors") {
  CHECK(K::layers::Dot(1, {.name = "d"})->get_config().dump() == R"({"name":"d","axes":1,"normalize":false})");
  CHECK(K::layers::Dot({1, 2}, {.normalize = true, .name = "d2"})->get_config().dump() ==
        R"({"name":"d2","axes":[1,2],"normalize":true})");
  // Mismatched dot axes.
  CHECK_THROWS_WITH_AS(K::layers::Dot(1)({K::Input({3}), K::Input({4})}),
                       doctest::Contains("axis values 3 (at axis 1) != 4 (at axis 1)"), K::ShapeError);
  // The batch axis.
  CHECK_THROWS_WITH_AS(K::layers::Dot(0)({K::Input({3}), K::Input({3})}), doctest::Contains("batch axis"),
                       K::ValueError);
  CHECK_THROWS_WITH_AS(K::layers::Dot({1, 3})({K::Input({3}), K::Input({3, 4})}), doctest::Contains("out of range"),
                       K::ValueError);
  // 4-D inputs and three inputs.
  CHECK_THROWS_WITH_AS(K::layers::Dot(-1)({K::Input({2, 3, 4}), K::Input({2, 3, 4})}),
                       doctest::Contains("2-D and 3-D inputs"), K::ShapeError);
  CHECK_THROWS_WITH_AS(K::layers::Dot(1)({K::Input({3}), K::Input({3}), K::Input({3})}),
                       doctest::Contains("list of 2 inputs"), K::ValueError);
}
