// embedding: run_layer_test (shapes, weights, config and .keras round trips, gradients, CPU vs GPU).
#include "expect_layer_passes.hpp"

TEST_CASE("layer test: Embedding on int32 ids") {
  expect_layer_passes({.make = [] { return K::LayerRef(K::layers::Embedding(10, 4)); },
                       .input_shapes = {{5}},
                       .input_dtypes = {K::DType::int32},
                       .expected_output_shape = K::Shape{5, 4},
                       .expected_trainable_weights = 1,
                       .expected_non_trainable_weights = 0});
}
