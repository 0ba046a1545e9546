// ELU: run_layer_test (shapes, weights, config and .keras round trips, gradients, CPU vs GPU).
#include "expect_layer_passes.hpp"

TEST_CASE("layer test: ELU") {
  expect_layer_passes({.make = [] { return K::LayerRef(K::layers::ELU({.alpha = 0.5f})); },
                       .input_shapes = {{3, 2}},
                       .expected_output_shape = K::Shape{3, 2},
                       .expected_trainable_weights = 0,
                       .expected_non_trainable_weights = 0});
}
