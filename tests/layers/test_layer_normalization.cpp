// layer_normalization: run_layer_test (shapes, weights, config and .keras round trips, gradients, CPU vs GPU).
#include "expect_layer_passes.hpp"

TEST_CASE("layer test: LayerNormalization") {
  expect_layer_passes({.make = [] { return K::LayerRef(K::layers::LayerNormalization({.epsilon = 1e-3f})); },
                       .input_shapes = {{2, 5}},
                       .expected_output_shape = K::Shape{2, 5},
                       .expected_trainable_weights = 2,
                       .expected_non_trainable_weights = 0});
}
