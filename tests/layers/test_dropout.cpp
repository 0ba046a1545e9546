// dropout: run_layer_test (shapes, weights, config and .keras round trips, gradients, CPU vs GPU).
#include <doctest/doctest.h>

#include "kerascpp/kerascpp.hpp"
#include "kerascpp/testing/layer_test.hpp"

namespace K = kerascpp;

TEST_CASE("layer test: Dropout (inference for the gradient check)") {
  K::testing::LayerTestCase t;
  t.make = [] { return K::LayerRef(K::layers::Dropout(0.25f, {.seed = 3})); };
  t.input_shapes = {{6}};
  t.expected_output_shape = K::Shape{6};
  t.expected_trainable_weights = 0;
  t.expected_non_trainable_weights = 0;
  t.gradient_options.training = false;
  const K::testing::LayerTestResult r = K::testing::run_layer_test(t);
  CHECK_MESSAGE(r.passed(), r.summary());
}
