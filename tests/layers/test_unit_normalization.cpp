// unit_normalization: run_layer_test, and the output against x / ||x|| in double.
#include <cmath>

#include "expect_layer_passes.hpp"
#include "layer_on_cpu.hpp"

TEST_CASE("layer test: UnitNormalization") {
  expect_layer_passes({.make = [] { return K::LayerRef(K::layers::UnitNormalization()); },
                       .input_shapes = {{2, 4}},
                       .expected_output_shape = K::Shape{2, 4},
                       .expected_trainable_weights = 0,
                       .expected_non_trainable_weights = 0});
}

TEST_CASE("UnitNormalization: each row over its L2 norm") {
  using namespace layer_on_cpu;
  Replica rep;
  const K::Tensor x = tensor_of({3, 5}, [](std::int64_t i) { return std::cos(0.9f * static_cast<float>(i)) * 3.f; });
  K::LayerState st;
  const auto yv = forward(rep, K::layers::UnitNormalization(), {x}, st).at(0).to_vector();
  const auto xv = x.to_vector();
  for (std::size_t r = 0; r < 3; ++r) {
    double squares = 0;
    for (std::size_t k = 0; k < 5; ++k) squares += double(xv[r * 5 + k]) * xv[r * 5 + k];
    for (std::size_t k = 0; k < 5; ++k)
      CHECK(yv[r * 5 + k] == doctest::Approx(xv[r * 5 + k] / std::sqrt(squares)).epsilon(1e-6));
  }
}
