// gru: run_layer_test (shapes, weights, config and .keras round trips, gradients, CPU vs GPU).
#include "expect_layer_passes.hpp"

TEST_CASE("layer test: GRU") {
  expect_layer_passes({.make = [] { return K::LayerRef(K::layers::GRU(3)); },
                       .input_shapes = {{4, 2}},
                       .expected_output_shape = K::Shape{3},
                       .expected_trainable_weights = 3,
                       .expected_non_trainable_weights = 0});
}
