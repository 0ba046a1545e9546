// merging: run_layer_test (shapes, weights, config and .keras round trips, gradients, CPU vs GPU).
#include "expect_layer_passes.hpp"

TEST_CASE("layer test: Add") {
  expect_layer_passes({.make = [] { return K::LayerRef(K::layers::Add()); },
                       .input_shapes = {{4}, {4}},
                       .expected_output_shape = K::Shape{4},
                       .expected_trainable_weights = 0,
                       .expected_non_trainable_weights = 0});
}

TEST_CASE("layer test: Subtract") {
  expect_layer_passes({.make = [] { return K::LayerRef(K::layers::Subtract()); },
                       .input_shapes = {{4}, {4}},
                       .expected_output_shape = K::Shape{4},
                       .expected_trainable_weights = 0,
                       .expected_non_trainable_weights = 0});
}

TEST_CASE("layer test: Multiply") {
  expect_layer_passes({.make = [] { return K::LayerRef(K::layers::Multiply()); },
                       .input_shapes = {{4}, {4}},
                       .expected_output_shape = K::Shape{4},
                       .expected_trainable_weights = 0,
                       .expected_non_trainable_weights = 0});
}

TEST_CASE("layer test: Average") {
  expect_layer_passes({.make = [] { return K::LayerRef(K::layers::Average()); },
                       .input_shapes = {{4}, {4}},
                       .expected_output_shape = K::Shape{4},
                       .expected_trainable_weights = 0,
                       .expected_non_trainable_weights = 0});
}

TEST_CASE("layer test: Concatenate") {
  expect_layer_passes({.make = [] { return K::LayerRef(K::layers::Concatenate(-1)); },
                       .input_shapes = {{2}, {3}},
                       .expected_output_shape = K::Shape{5},
                       .expected_trainable_weights = 0,
                       .expected_non_trainable_weights = 0});
}
