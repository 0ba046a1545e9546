// normalization: run_layer_test with fixed and with adapted statistics; adapt() against the
// float64 mean and population variance of all the rows; a constant feature gives 0, as Keras'
// epsilon floor makes it; what cannot be done is refused.
#include "expect_layer_passes.hpp"
#include "kerascpp/layers/normalization.hpp"
#include "layer_on_cpu.hpp"

#include <cmath>

TEST_CASE("layer test: Normalization with fixed statistics (no weights)") {
  expect_layer_passes(
      {.make = [] { return K::LayerRef(K::layers::Normalization({.mean = {{0.5f}}, .variance = {{4.f}}})); },
       .input_shapes = {{2, 3}},
       .expected_output_shape = K::Shape{2, 3},
       .expected_trainable_weights = 0,
       .expected_non_trainable_weights = 0});
}

TEST_CASE("layer test: Normalization to adapt (Keras' mean, variance and count weights)") {
  expect_layer_passes({.make = [] { return K::LayerRef(K::layers::Normalization()); },
                       .input_shapes = {{4}},
                       .expected_output_shape = K::Shape{4},
                       .expected_trainable_weights = 0,
                       .expected_non_trainable_weights = 3});
}

TEST_CASE("Normalization.adapt: every row's mean and population variance, over uneven batches") {
  using namespace layer_on_cpu;
  const std::int64_t rows = 30, features = 3;
  // Feature f: a spread of values around 10^f, so each feature's statistics differ.
  const K::Tensor x = tensor_of({rows, features}, [](std::int64_t i) {
    const std::int64_t r = i / 3, f = i % 3;
    return static_cast<float>(std::pow(10.0, static_cast<double>(f)) + std::sin(static_cast<double>(r * 7 + f)) * 3.0);
  });
  auto norm = K::layers::Normalization();
  norm->adapt(K::Dataset::from_tensor_slices(x).batch(7));  // batches of 7, 7, 7, 7 and 2 rows
  const auto xv = x.to_vector();
  std::vector<double> mean(features, 0.0), var(features, 0.0);
  for (std::size_t i = 0; i < xv.size(); ++i) mean[i % 3] += xv[i] / static_cast<double>(rows);
  for (std::size_t i = 0; i < xv.size(); ++i)
    var[i % 3] += std::pow(xv[i] - mean[i % 3], 2) / static_cast<double>(rows);
  const auto weights = norm->variables();
  REQUIRE(weights.size() == 3);
  const auto m = weights[0]->value().to_vector(), v = weights[1]->value().to_vector();
  for (std::size_t f = 0; f < 3; ++f) {
    CHECK(m[f] == doctest::Approx(mean[f]).epsilon(1e-6));
    CHECK(v[f] == doctest::Approx(var[f]).epsilon(1e-5));
  }
  CHECK(weights[2]->value().to_vector().at(0) == 30.f);
  // Applied: (x - mean) / sqrt(variance).
  Replica rep;
  K::LayerState st;
  const auto y = forward(rep, K::LayerRef(norm), {x}, st).at(0).to_vector();
  for (std::size_t i = 0; i < xv.size(); ++i)
    CHECK(y[i] == doctest::Approx((xv[i] - mean[i % 3]) / std::sqrt(var[i % 3])).epsilon(1e-4));
}

TEST_CASE("Normalization: a constant feature gives 0; bad settings are refused") {
  using namespace layer_on_cpu;
  const K::Tensor x = tensor_of({4, 2}, [](std::int64_t i) { return i % 2 == 0 ? 5.f : static_cast<float>(i); });
  auto norm = K::layers::Normalization();
  norm->adapt(K::Dataset::from_tensor_slices(x));  // unbatched elements: one row each
  Replica rep;
  K::LayerState st;
  const auto y = forward(rep, K::LayerRef(norm), {x}, st).at(0).to_vector();
  for (std::size_t i = 0; i < y.size(); i += 2) CHECK(y[i] == 0.f);  // Keras: 0 / max(sqrt(0), 1e-7)
  CHECK_THROWS_AS(K::layers::Normalization({.axis = 0}), K::ValueError);
  CHECK_THROWS_AS(K::layers::Normalization({.mean = {{1.f}}}), K::ValueError);
  auto fixed = K::layers::Normalization({.mean = {{1.f}}, .variance = {{1.f}}});
  CHECK_THROWS_AS(fixed->adapt(K::Dataset::from_tensor_slices(x)), K::ValueError);
  CHECK_THROWS_AS(K::layers::Normalization()->adapt(K::Dataset::from_tensor_slices(x).take(0)), K::ValueError);
}
