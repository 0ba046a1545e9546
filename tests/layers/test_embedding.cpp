// embedding: run_layer_test (shapes, weights, config and .keras round trips, gradients, CPU vs GPU).
#include <doctest/doctest.h>

#include "kerascpp/kerascpp.hpp"
#include "kerascpp/testing/layer_test.hpp"

namespace K = kerascpp;

TEST_CASE("layer test: Embedding on int32 ids") {
  K::testing::LayerTestCase t;
  t.make = [] { return K::LayerRef(K::layers::Embedding(10, 4)); };
  t.input_shapes = {{5}};
  t.expected_output_shape = K::Shape{5, 4};
  t.expected_trainable_weights = 1;
  t.expected_non_trainable_weights = 0;
  t.input_dtypes = {K::DType::int32};
  const K::testing::LayerTestResult r = K::testing::run_layer_test(t);
  CHECK_MESSAGE(r.passed(), r.summary());
}
