// zero_padding2d: run_layer_test (shapes, weights, config and .keras round trips, gradients, CPU vs GPU).
#include "expect_layer_passes.hpp"

TEST_CASE("layer test: ZeroPadding2D asymmetric") {
  expect_layer_passes({.make = [] { return K::LayerRef(K::layers::ZeroPadding2D(K::layers::Padding2D(1, 0, 2, 1))); },
                       .input_shapes = {{3, 3, 1}},
                       .expected_output_shape = K::Shape{4, 6, 1},
                       .expected_trainable_weights = 0,
                       .expected_non_trainable_weights = 0});
}
