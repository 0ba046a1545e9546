// dense: run_layer_test (shapes, weights, config and .keras round trips, gradients, CPU vs GPU).
#include "expect_layer_passes.hpp"

TEST_CASE("layer test: Dense with tanh and bias") {
  expect_layer_passes({.make = [] { return K::LayerRef(K::layers::Dense(3, {.activation = "tanh"})); },
                       .input_shapes = {{4}},
                       .expected_output_shape = K::Shape{3},
                       .expected_trainable_weights = 2,
                       .expected_non_trainable_weights = 0});
}
