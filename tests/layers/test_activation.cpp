// activation: run_layer_test (shapes, weights, config and .keras round trips, gradients, CPU vs GPU).
#include "expect_layer_passes.hpp"

TEST_CASE("layer test: Activation tanh") {
  expect_layer_passes({.make = [] { return K::LayerRef(K::layers::Activation("tanh")); },
                       .input_shapes = {{5}},
                       .expected_output_shape = K::Shape{5},
                       .expected_trainable_weights = 0,
                       .expected_non_trainable_weights = 0});
}
