// dense: run_layer_test (shapes, weights, config and .keras round trips, gradients, CPU vs GPU).
#include <doctest/doctest.h>

#include "kerascpp/kerascpp.hpp"
#include "kerascpp/testing/layer_test.hpp"

namespace K = kerascpp;

TEST_CASE("layer test: Dense with tanh and bias") {
  K::testing::LayerTestCase t;
  t.make = [] { return K::LayerRef(K::layers::Dense(3, {.activation = "tanh"})); };
  t.input_shapes = {{4}};
  t.expected_output_shape = K::Shape{3};
  t.expected_trainable_weights = 2;
  t.expected_non_trainable_weights = 0;
  const K::testing::LayerTestResult r = K::testing::run_layer_test(t);
  CHECK_MESSAGE(r.passed(), r.summary());
}
