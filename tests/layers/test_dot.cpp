// dot: run_layer_test (shapes, weights, config and .keras round trips, gradients, CPU vs GPU).
#include "expect_layer_passes.hpp"

TEST_CASE("layer test: Dot over axes (2, 2) of two sequences") {
  expect_layer_passes({.make = [] { return K::LayerRef(K::layers::Dot({2, 2})); },
                       .input_shapes = {{3, 4}, {2, 4}},
                       .expected_output_shape = K::Shape{3, 2},
                       .expected_trainable_weights = 0,
                       .expected_non_trainable_weights = 0});
}

TEST_CASE("layer test: Dot normalized (cosine)") {
  expect_layer_passes({.make = [] { return K::LayerRef(K::layers::Dot(1, {.normalize = true})); },
                       .input_shapes = {{4}, {4}},
                       .expected_output_shape = K::Shape{1},
                       .expected_trainable_weights = 0,
                       .expected_non_trainable_weights = 0});
}
