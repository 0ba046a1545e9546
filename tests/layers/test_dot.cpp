// dot: run_layer_test (shapes, weights, config and .keras round trips, gradients, CPU vs GPU).
#include <doctest/doctest.h>

#include "kerascpp/kerascpp.hpp"
#include "kerascpp/testing/layer_test.hpp"

namespace K = kerascpp;

TEST_CASE("layer test: Dot over axes (2, 2) of two sequences") {
  K::testing::LayerTestCase t;
  t.make = [] { return K::LayerRef(K::layers::Dot({2, 2})); };
  t.input_shapes = {{3, 4}, {2, 4}};
  t.expected_output_shape = K::Shape{3, 2};
  t.expected_trainable_weights = 0;
  t.expected_non_trainable_weights = 0;
  const K::testing::LayerTestResult r = K::testing::run_layer_test(t);
  CHECK_MESSAGE(r.passed(), r.summary());
}

TEST_CASE("layer test: Dot normalized (cosine)") {
  K::testing::LayerTestCase t;
  t.make = [] { return K::LayerRef(K::layers::Dot(1, {.normalize = true})); };
  t.input_shapes = {{4}, {4}};
  t.expected_output_shape = K::Shape{1};
  t.expected_trainable_weights = 0;
  t.expected_non_trainable_weights = 0;
  const K::testing::LayerTestResult r = K::testing::run_layer_test(t);
  CHECK_MESSAGE(r.passed(), r.summary());
}
