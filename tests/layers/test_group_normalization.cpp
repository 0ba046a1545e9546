// group_normalization: run_layer_test (shapes, weights, config and .keras round trips, gradients, CPU vs GPU).
#include "expect_layer_passes.hpp"

TEST_CASE("layer test: GroupNormalization, 2 groups of 2 channels over 3x2 positions") {
  expect_layer_passes({.make = [] { return K::LayerRef(K::layers::GroupNormalization({.groups = 2})); },
                       .input_shapes = {{3, 2, 4}},
                       .expected_output_shape = K::Shape{3, 2, 4},
                       .expected_trainable_weights = 2,
                       .expected_non_trainable_weights = 0});
}

TEST_CASE("layer test: GroupNormalization, instance normalization (groups -1), center only") {
  expect_layer_passes(
      {.make = [] { return K::LayerRef(K::layers::GroupNormalization({.groups = -1, .scale = false})); },
       .input_shapes = {{5, 3}},
       .expected_output_shape = K::Shape{5, 3},
       .expected_trainable_weights = 1,
       .expected_non_trainable_weights = 0});
}

TEST_CASE("layer test: GroupNormalization, one group, no scale or shift") {
  expect_layer_passes(
      {.make =
           [] { return K::LayerRef(K::layers::GroupNormalization({.groups = 1, .center = false, .scale = false})); },
       .input_shapes = {{4, 2}},
       .expected_output_shape = K::Shape{4, 2},
       .expected_trainable_weights = 0,
       .expected_non_trainable_weights = 0});
}

TEST_CASE("GroupNormalization: groups that do not divide the channels are a ValueError naming both") {
  auto in = K::Input({3, 4});
  CHECK_THROWS_WITH_AS(K::layers::GroupNormalization({.groups = 3})(in), doctest::Contains("groups (3)"),
                       K::ValueError);
  CHECK_THROWS_AS(K::layers::GroupNormalization({.groups = 0}), K::ValueError);
}
