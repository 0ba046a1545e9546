// reshape: run_layer_test (shapes, weights, config and .keras round trips, gradients, CPU vs GPU).
#include "expect_layer_passes.hpp"

TEST_CASE("layer test: Reshape") {
  expect_layer_passes({.make = [] { return K::LayerRef(K::layers::Reshape({3, 4})); },
                       .input_shapes = {{12}},
                       .expected_output_shape = K::Shape{3, 4},
                       .expected_trainable_weights = 0,
                       .expected_non_trainable_weights = 0});
}
