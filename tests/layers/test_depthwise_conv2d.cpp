// depthwise_conv2d: run_layer_test (shapes, weights, config and .keras round trips, gradients, CPU vs GPU).
#include "expect_layer_passes.hpp"

TEST_CASE("layer test: DepthwiseConv2D depth_multiplier 2") {
  expect_layer_passes({.make = [] { return K::LayerRef(K::layers::DepthwiseConv2D(3, {.depth_multiplier = 2})); },
                       .input_shapes = {{4, 4, 2}},
                       .expected_output_shape = K::Shape{2, 2, 4},
                       .expected_trainable_weights = 2,
                       .expected_non_trainable_weights = 0});
}
