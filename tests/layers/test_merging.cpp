// merging: run_layer_test (shapes, weights, config and .keras round trips, gradients, CPU vs GPU).
#include <doctest/doctest.h>

#include "kerascpp/kerascpp.hpp"
#include "kerascpp/testing/layer_test.hpp"

namespace K = kerascpp;

TEST_CASE("layer test: Add") {
  K::testing::LayerTestCase t;
  t.make = [] { return K::LayerRef(K::layers::Add()); };
  t.input_shapes = {{4}, {4}};
  t.expected_output_shape = K::Shape{4};
  t.expected_trainable_weights = 0;
  t.expected_non_trainable_weights = 0;
  const K::testing::LayerTestResult r = K::testing::run_layer_test(t);
  CHECK_MESSAGE(r.passed(), r.summary());
}

TEST_CASE("layer test: Subtract") {
  K::testing::LayerTestCase t;
  t.make = [] { return K::LayerRef(K::layers::Subtract()); };
  t.input_shapes = {{4}, {4}};
  t.expected_output_shape = K::Shape{4};
  t.expected_trainable_weights = 0;
  t.expected_non_trainable_weights = 0;
  const K::testing::LayerTestResult r = K::testing::run_layer_test(t);
  CHECK_MESSAGE(r.passed(), r.summary());
}

TEST_CASE("layer test: Multiply") {
  K::testing::LayerTestCase t;
  t.make = [] { return K::LayerRef(K::layers::Multiply()); };
  t.input_shapes = {{4}, {4}};
  t.expected_output_shape = K::Shape{4};
  t.expected_trainable_weights = 0;
  t.expected_non_trainable_weights = 0;
  const K::testing::LayerTestResult r = K::testing::run_layer_test(t);
  CHECK_MESSAGE(r.passed(), r.summary());
}

TEST_CASE("layer test: Average") {
  K::testing::LayerTestCase t;
  t.make = [] { return K::LayerRef(K::layers::Average()); };
  t.input_shapes = {{4}, {4}};
  t.expected_output_shape = K::Shape{4};
  t.expected_trainable_weights = 0;
  t.expected_non_trainable_weights = 0;
  const K::testing::LayerTestResult r = K::testing::run_layer_test(t);
  CHECK_MESSAGE(r.passed(), r.summary());
}

TEST_CASE("layer test: Concatenate") {
  K::testing::LayerTestCase t;
  t.make = [] { return K::LayerRef(K::layers::Concatenate(-1)); };
  t.input_shapes = {{2}, {3}};
  t.expected_output_shape = K::Shape{5};
  t.expected_trainable_weights = 0;
  t.expected_non_trainable_weights = 0;
  const K::testing::LayerTestResult r = K::testing::run_layer_test(t);
  CHECK_MESSAGE(r.passed(), r.summary());
}
