// multi_head_attention: run_layer_test (shapes, weights, config and .keras round trips, gradients, CPU vs GPU).
#include <doctest/doctest.h>

#include "kerascpp/kerascpp.hpp"
#include "kerascpp/testing/layer_test.hpp"

namespace K = kerascpp;

TEST_CASE("layer test: MultiHeadAttention over a query and a value sequence") {
  K::testing::LayerTestCase t;
  t.make = [] { return K::LayerRef(K::layers::MultiHeadAttention(2, 3)); };
  t.input_shapes = {{4, 5}, {3, 5}};
  t.expected_output_shape = K::Shape{4, 5};
  t.expected_trainable_weights = 8;
  t.expected_non_trainable_weights = 0;
  const K::testing::LayerTestResult r = K::testing::run_layer_test(t);
  CHECK_MESSAGE(r.passed(), r.summary());
}
