// separable_conv: run_layer_test (shapes, weights, config and .keras round trips, gradients, CPU vs GPU)
// on SeparableConv2D and SeparableConv1D.
#include "expect_layer_passes.hpp"

TEST_CASE("layer test: SeparableConv2D strides 2, same, depth_multiplier 2, tanh") {
  expect_layer_passes(
      {.make =
           [] {
             return K::LayerRef(K::layers::SeparableConv2D(
                 3, {3, 2}, {.strides = 2, .padding = K::Padding::same, .depth_multiplier = 2, .activation = "tanh"}));
           },
       .input_shapes = {{5, 4, 2}},
       .expected_output_shape = K::Shape{3, 2, 3},
       .expected_trainable_weights = 3,
       .expected_non_trainable_weights = 0});
}

TEST_CASE("layer test: SeparableConv1D valid, no bias, gelu (kept pre-activation)") {
  expect_layer_passes({.make =
                           [] {
                             return K::LayerRef(K::layers::SeparableConv1D(
                                 2, 3, {.depth_multiplier = 2, .activation = "gelu", .use_bias = false}));
                           },
                       .input_shapes = {{6, 3}},
                       .expected_output_shape = K::Shape{4, 2},
                       .expected_trainable_weights = 2,
                       .expected_non_trainable_weights = 0});
}

TEST_CASE("SeparableConv2D/1D: causal padding and a zero depth_multiplier are ValueErrors") {
  CHECK_THROWS_WITH_AS(K::layers::SeparableConv1D(2, 3, {.padding = K::Padding::causal}), doctest::Contains("padding"),
                       K::ValueError);
  CHECK_THROWS_WITH_AS(K::layers::SeparableConv2D(2, 3, {.depth_multiplier = 0}), doctest::Contains("depth_multiplier"),
                       K::ValueError);
}
