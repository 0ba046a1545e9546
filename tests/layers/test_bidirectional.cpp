// bidirectional: run_layer_test (shapes, weights, config and .keras round trips, gradients, CPU vs GPU)
// for each kind of merge. The merges against a formula, masks and return_state: tests/test_recurrent.cpp;
// Keras: the bidirectional kinds of tests/python/test_transformer_layers_interop.py.
#include "expect_layer_passes.hpp"

TEST_CASE("layer test: Bidirectional(LSTM) returning sequences, concatenated") {
  expect_layer_passes({.make = [] { return K::layers::Bidirectional(K::layers::LSTM(3, {.return_sequences = true})); },
                       .input_shapes = {{4, 2}},
                       .expected_output_shape = K::Shape{4, 6},
                       .expected_trainable_weights = 6,
                       .expected_non_trainable_weights = 0});
}

TEST_CASE("layer test: Bidirectional(GRU) multiplied, and SimpleRNN averaged") {
  expect_layer_passes({.make = [] { return K::layers::Bidirectional(K::layers::GRU(2), {.merge_mode = "mul"}); },
                       .input_shapes = {{3, 2}},
                       .expected_output_shape = K::Shape{2},
                       .expected_trainable_weights = 6});
  expect_layer_passes({.make =
                           [] {
                             return K::layers::Bidirectional(K::layers::SimpleRNN(2, {.return_sequences = true}),
                                                             {.merge_mode = "ave"});
                           },
                       .input_shapes = {{3, 2}},
                       .expected_output_shape = K::Shape{3, 2},
                       .expected_trainable_weights = 6});
}

TEST_CASE("layer test: Bidirectional(LSTM) with merge_mode None (two outputs) and its states") {
  expect_layer_passes({.make =
                           [] {
                             return K::layers::Bidirectional(
                                 K::layers::LSTM(2, {.return_sequences = true, .return_state = true}),
                                 {.merge_mode = std::nullopt});
                           },
                       .input_shapes = {{3, 2}},
                       .expected_output_shape = K::Shape{3, 2},
                       .expected_trainable_weights = 6});
}
