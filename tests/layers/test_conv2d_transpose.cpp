// conv2d_transpose: run_layer_test (shapes, weights, config and .keras round trips, gradients, CPU vs GPU).
#include <doctest/doctest.h>

#include "kerascpp/kerascpp.hpp"
#include "kerascpp/testing/layer_test.hpp"

namespace K = kerascpp;

TEST_CASE("layer test: Conv2DTranspose stride 2") {
  K::testing::LayerTestCase t;
  t.make = [] { return K::LayerRef(K::layers::Conv2DTranspose(2, 3, {.strides = 2})); };
  t.input_shapes = {{3, 3, 2}};
  t.expected_output_shape = K::Shape{7, 7, 2};
  t.expected_trainable_weights = 2;
  t.expected_non_trainable_weights = 0;
  const K::testing::LayerTestResult r = K::testing::run_layer_test(t);
  CHECK_MESSAGE(r.passed(), r.summary());
}
