// dropout: run_layer_test (shapes, weights, config and .keras round trips, gradients, CPU vs GPU).
#include "expect_layer_passes.hpp"

TEST_CASE("layer test: Dropout (inference for the gradient check)") {
  expect_layer_passes({.make = [] { return K::LayerRef(K::layers::Dropout(0.25f, {.seed = 3})); },
                       .input_shapes = {{6}},
                       .expected_output_shape = K::Shape{6},
                       .expected_trainable_weights = 0,
                       .expected_non_trainable_weights = 0,
                       .gradient_options = {.training = false}});
}
