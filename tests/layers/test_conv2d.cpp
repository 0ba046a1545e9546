// conv2d: run_layer_test (shapes, weights, config and .keras round trips, gradients, CPU vs GPU).
#include "expect_layer_passes.hpp"

TEST_CASE("layer test: Conv2D same padding, stride 2") {
  expect_layer_passes(
      {.make = [] { return K::LayerRef(K::layers::Conv2D(2, 3, {.strides = 2, .padding = K::Padding::same})); },
       .input_shapes = {{5, 5, 2}},
       .expected_output_shape = K::Shape{3, 3, 2},
       .expected_trainable_weights = 2,
       .expected_non_trainable_weights = 0});
}
