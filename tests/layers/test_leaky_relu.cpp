// LeakyReLU: run_layer_test (shapes, weights, config and .keras round trips, gradients, CPU vs GPU).
#include "expect_layer_passes.hpp"

TEST_CASE("layer test: LeakyReLU") {
  expect_layer_passes({.make = [] { return K::LayerRef(K::layers::LeakyReLU({.negative_slope = 0.1f})); },
                       .input_shapes = {{6}},
                       .expected_output_shape = K::Shape{6},
                       .expected_trainable_weights = 0,
                       .expected_non_trainable_weights = 0});
  CHECK_THROWS_AS(K::layers::LeakyReLU({.negative_slope = -0.1f}), K::ValueError);
}
