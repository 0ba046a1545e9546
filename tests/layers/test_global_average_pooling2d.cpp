// global_average_pooling2d: run_layer_test (shapes, weights, config and .keras round trips, gradients, CPU vs GPU).
#include "expect_layer_passes.hpp"

TEST_CASE("layer test: GlobalAveragePooling2D") {
  expect_layer_passes({.make = [] { return K::LayerRef(K::layers::GlobalAveragePooling2D()); },
                       .input_shapes = {{3, 3, 2}},
                       .expected_output_shape = K::Shape{2},
                       .expected_trainable_weights = 0,
                       .expected_non_trainable_weights = 0});
}
