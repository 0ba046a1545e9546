// multi_head_attention: run_layer_test (shapes, weights, config and .keras round trips, gradients, CPU vs GPU).
#include "expect_layer_passes.hpp"

TEST_CASE("layer test: MultiHeadAttention over a query and a value sequence") {
  expect_layer_passes({.make = [] { return K::LayerRef(K::layers::MultiHeadAttention(2, 3)); },
                       .input_shapes = {{4, 5}, {3, 5}},
                       .expected_output_shape = K::Shape{4, 5},
                       .expected_trainable_weights = 8,
                       .expected_non_trainable_weights = 0});
}
