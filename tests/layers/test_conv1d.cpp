// conv1d: run_layer_test (shapes, weights, config and .keras round trips, gradients, CPU vs GPU).
#include "expect_layer_passes.hpp"

TEST_CASE("layer test: Conv1D causal, stride 1") {
  expect_layer_passes(
      {.make =
           [] { return K::LayerRef(K::layers::Conv1D(2, 3, {.padding = K::Padding::causal, .activation = "tanh"})); },
       .input_shapes = {{6, 2}},
       .expected_output_shape = K::Shape{6, 2},
       .expected_trainable_weights = 2,
       .expected_non_trainable_weights = 0});
}
