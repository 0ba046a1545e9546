// SimpleRNN: Keras 3's layers.SimpleRNN(units), the fully connected recurrence
// h_t = activation(x_t·kernel + h_{t-1}·recurrent_kernel + bias), over (batch, steps, features).
// It shares LSTM's and GRU's layer (kerascpp/layers/recurrent.hpp): the same options, masks,
// return_sequences / return_state / go_backwards, and Keras' "cell" weight group.
#pragma once
#include "kerascpp/layers/recurrent.hpp"

namespace kerascpp::layers {

// SimpleRNN(8), SimpleRNN(4, {.activation = "relu", .return_sequences = true})
/// Keras' SimpleRNN(units) over (batch, steps, features).
LayerRef SimpleRNN(std::int64_t units, RecurrentOptions options = {});

}  // namespace kerascpp::layers
