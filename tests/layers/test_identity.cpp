// identity: run_layer_test (shapes, weights, config and .keras round trips, gradients, CPU vs GPU).
#include "expect_layer_passes.hpp"

TEST_CASE("layer test: Identity") {
  expect_layer_passes({.make = [] { return K::LayerRef(K::layers::Identity()); },
                       .input_shapes = {{2, 3}},
                       .expected_output_shape = K::Shape{2, 3},
                       .expected_trainable_weights = 0,
                       .expected_non_trainable_weights = 0});
}
