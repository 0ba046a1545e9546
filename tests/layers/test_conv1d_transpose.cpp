// conv1d_transpose: run_layer_test (shapes, weights, config and .keras round trips, gradients, CPU vs GPU).
#include "expect_layer_passes.hpp"

TEST_CASE("layer test: Conv1DTranspose strides 2, same, tanh") {
  expect_layer_passes({.make =
                           [] {
                             return K::LayerRef(K::layers::Conv1DTranspose(
                                 3, 3, {.strides = 2, .padding = K::Padding::same, .activation = "tanh"}));
                           },
                       .input_shapes = {{4, 2}},
                       .expected_output_shape = K::Shape{8, 3},
                       .expected_trainable_weights = 2,
                       .expected_non_trainable_weights = 0});
}

TEST_CASE("layer test: Conv1DTranspose valid, kernel smaller than the stride, no bias") {
  expect_layer_passes(
      {.make = [] { return K::LayerRef(K::layers::Conv1DTranspose(2, 2, {.strides = 3, .use_bias = false})); },
       .input_shapes = {{3, 2}},
       .expected_output_shape = K::Shape{9, 2},
       .expected_trainable_weights = 1,
       .expected_non_trainable_weights = 0});
}
