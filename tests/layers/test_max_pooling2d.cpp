// max_pooling2d: run_layer_test (shapes, weights, config and .keras round trips, gradients, CPU vs GPU).
#include "expect_layer_passes.hpp"

TEST_CASE("layer test: MaxPooling2D") {
  expect_layer_passes({.make = [] { return K::LayerRef(K::layers::MaxPooling2D(2)); },
                       .input_shapes = {{4, 4, 2}},
                       .expected_output_shape = K::Shape{2, 2, 2},
                       .expected_trainable_weights = 0,
                       .expected_non_trainable_weights = 0});
}
