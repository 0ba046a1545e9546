// simple_rnn: run_layer_test (shapes, weights, config and .keras round trips, gradients, CPU vs GPU).
// Masks, return_state and the formula itself: tests/test_recurrent.cpp; Keras: the simple_rnn kinds
// of tests/python/test_transformer_layers_interop.py.
#include "expect_layer_passes.hpp"

TEST_CASE("layer test: SimpleRNN returning sequences, read backwards") {
  expect_layer_passes(
      {.make = [] { return K::LayerRef(K::layers::SimpleRNN(3, {.return_sequences = true, .go_backwards = true})); },
       .input_shapes = {{4, 2}},
       .expected_output_shape = K::Shape{4, 3},
       .expected_trainable_weights = 3,
       .expected_non_trainable_weights = 0});
}

TEST_CASE("layer test: SimpleRNN with a softsign activation and no bias") {
  expect_layer_passes(
      {.make = [] { return K::LayerRef(K::layers::SimpleRNN(2, {.activation = "softsign", .use_bias = false})); },
       .input_shapes = {{3, 2}},
       .expected_output_shape = K::Shape{2},
       .expected_trainable_weights = 2,
       .expected_non_trainable_weights = 0});
}
