// average_pooling2d: run_layer_test (shapes, weights, config and .keras round trips, gradients, CPU vs GPU).
#include "expect_layer_passes.hpp"

TEST_CASE("layer test: AveragePooling2D same padding") {
  expect_layer_passes(
      {.make = [] { return K::LayerRef(K::layers::AveragePooling2D(2, {.strides = 1, .padding = K::Padding::same})); },
       .input_shapes = {{3, 3, 2}},
       .expected_output_shape = K::Shape{3, 3, 2},
       .expected_trainable_weights = 0,
       .expected_non_trainable_weights = 0});
}
