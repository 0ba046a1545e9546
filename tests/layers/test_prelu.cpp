// PReLU: run_layer_test (shapes, weights, config and .keras round trips, gradients, CPU vs GPU).
#include "expect_layer_passes.hpp"

TEST_CASE("layer test: PReLU, one slope per element") {
  expect_layer_passes(
      {.make =
           [] {
             return K::LayerRef(K::layers::PReLU({.alpha_initializer = K::initializers::Initializer::constant(0.25f)}));
           },
       .input_shapes = {{4}},
       .expected_output_shape = K::Shape{4},
       .expected_trainable_weights = 1,
       .expected_non_trainable_weights = 0,
       // Small steps: a central difference across a kink (0, the threshold, the cap)
       // measures neither side, and the inputs are drawn from [-1, 1).
       .gradient_options = {.epsilon = 1e-3}});
}

TEST_CASE("layer test: PReLU shared over the spatial axes of an image") {
  expect_layer_passes(
      {.make =
           [] {
             return K::LayerRef(K::layers::PReLU(
                 {.alpha_initializer = K::initializers::Initializer::constant(0.3f), .shared_axes = {1, 2}}));
           },
       .input_shapes = {{3, 2, 2}},
       .expected_output_shape = K::Shape{3, 2, 2},
       .expected_trainable_weights = 1,
       .expected_non_trainable_weights = 0,
       // Small steps: a central difference across a kink (0, the threshold, the cap)
       // measures neither side, and the inputs are drawn from [-1, 1).
       .gradient_options = {.epsilon = 1e-3}});
  // Axis 4 does not exist in a (batch, 3, 2) input.
  CHECK_THROWS_AS((*K::layers::PReLU({.shared_axes = {4}}))(K::Input({3, 2})), K::ValueError);
}
