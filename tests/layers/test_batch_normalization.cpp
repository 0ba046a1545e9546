// batch_normalization: run_layer_test (shapes, weights, config and .keras round trips, gradients, CPU vs GPU).
#include "expect_layer_passes.hpp"

TEST_CASE("layer test: BatchNormalization") {
  expect_layer_passes({.make = [] { return K::LayerRef(K::layers::BatchNormalization({.momentum = 0.9f})); },
                       .input_shapes = {{2, 2, 3}},
                       .expected_output_shape = K::Shape{2, 2, 3},
                       .expected_trainable_weights = 2,
                       .expected_non_trainable_weights = 2,
                       .gradient_options = {.tolerance = 1e-2}});
}
