// softmax: run_layer_test (shapes, weights, config and .keras round trips, gradients, CPU vs GPU).
#include "expect_layer_passes.hpp"

TEST_CASE("layer test: Softmax over axis 1") {
  expect_layer_passes({.make = [] { return K::LayerRef(K::layers::Softmax({.axis = 1})); },
                       .input_shapes = {{3, 4}},
                       .expected_output_shape = K::Shape{3, 4},
                       .expected_trainable_weights = 0,
                       .expected_non_trainable_weights = 0});
}
