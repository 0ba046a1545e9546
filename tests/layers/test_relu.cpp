// ReLU: run_layer_test (shapes, weights, config and .keras round trips, gradients, CPU vs GPU).
#include "expect_layer_passes.hpp"

TEST_CASE("layer test: ReLU with max_value, negative_slope and threshold") {
  expect_layer_passes(
      {.make =
           [] { return K::LayerRef(K::layers::ReLU({.max_value = 0.6f, .negative_slope = 0.2f, .threshold = 0.1f})); },
       .input_shapes = {{2, 5}},
       .expected_output_shape = K::Shape{2, 5},
       .expected_trainable_weights = 0,
       .expected_non_trainable_weights = 0,
       // Small steps: a central difference across a kink (0, the threshold, the cap)
       // measures neither side, and the inputs are drawn from [-1, 1).
       .gradient_options = {.epsilon = 1e-3}});
}

TEST_CASE("ReLU: Keras' argument checks") {
  CHECK_THROWS_AS(K::layers::ReLU({.max_value = -1.f}), K::ValueError);
  CHECK_THROWS_AS(K::layers::ReLU({.negative_slope = -0.1f}), K::ValueError);
  CHECK_THROWS_AS(K::layers::ReLU({.threshold = -0.5f}), K::ValueError);
}
