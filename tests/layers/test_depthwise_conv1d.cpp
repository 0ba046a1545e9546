// depthwise_conv1d: run_layer_test (shapes, weights, config and .keras round trips, gradients, CPU vs GPU).
#include "expect_layer_passes.hpp"

TEST_CASE("layer test: DepthwiseConv1D strides 2, same, depth_multiplier 2") {
  expect_layer_passes(
      {.make =
           [] {
             return K::LayerRef(K::layers::DepthwiseConv1D(
                 3, {.strides = 2, .padding = K::Padding::same, .depth_multiplier = 2, .activation = "sigmoid"}));
           },
       .input_shapes = {{7, 2}},
       .expected_output_shape = K::Shape{4, 4},
       .expected_trainable_weights = 2,
       .expected_non_trainable_weights = 0});
}
