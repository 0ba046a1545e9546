// up_sampling2d: run_layer_test (shapes, weights, config and .keras round trips, gradients, CPU vs GPU).
#include "expect_layer_passes.hpp"

TEST_CASE("layer test: UpSampling2D bilinear") {
  expect_layer_passes({.make = [] { return K::LayerRef(K::layers::UpSampling2D(2, {.interpolation = "bilinear"})); },
                       .input_shapes = {{2, 3, 1}},
                       .expected_output_shape = K::Shape{4, 6, 1},
                       .expected_trainable_weights = 0,
                       .expected_non_trainable_weights = 0});
}
