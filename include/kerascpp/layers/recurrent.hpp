// LSTM, GRU and SimpleRNN: Keras 3's layers.LSTM(units), layers.GRU(units) (reset_after=True) and
// layers.SimpleRNN(units) over a (batch, steps, features) input, with Keras' weight layouts and
// gate orders
//   SimpleRNN: kernel [features, units], recurrent_kernel [units, units], bias [units]
//   LSTM: kernel [features, 4·units], recurrent_kernel [units, 4·units], bias [4·units], gates i, f, c, o
//   GRU:  kernel [features, 3·units], recurrent_kernel [units, 3·units], bias [2, 3·units]
//         (row 0 the input bias, row 1 the recurrent bias), gates z, r, h
// stored in .weights.h5 under the layer's "cell" sublayer group as Keras writes them.
//
// Masks, as Keras' rnn(): at a step whose Keras mask ([B, T], e.g. from Embedding(mask_zero))
// is 0 the states are carried over unchanged and the output repeats the previous output (zeros
// before the first kept step). The output mask is the input mask with return_sequences, none
// otherwise. go_backwards reads the steps last to first and, like Keras, returns the sequence in
// that (reversed) order; zero_output_for_mask (which Bidirectional sets) outputs zeros at masked
// steps instead. return_state adds the final states as outputs: [output, h] (SimpleRNN, GRU),
// [output, h, c] (LSTM).
//
// Not supported: initial_state, stateful, dropout/recurrent_dropout, unroll, GRU reset_after=False,
// activations other than the Backend's (tanh, sigmoid, relu, linear).
#pragma once
#include <optional>

#include "kerascpp/core/layer.hpp"

namespace kerascpp::layers {

/// The settings of LSTM, GRU and SimpleRNN, with Keras' names and defaults.
struct RecurrentOptions {
  /// Applied to the output; "linear" applies none.
  std::string activation = "tanh";
  /// The gates' activation (LSTM and GRU; SimpleRNN has none).
  std::string recurrent_activation = "sigmoid";
  /// Whether the layer adds a bias.
  bool use_bias = true;
  /// How the kernel starts: an initializer name or initializers::Constant(v).
  initializers::Initializer kernel_initializer = "glorot_uniform";
  /// How the recurrent kernel starts.
  initializers::Initializer recurrent_initializer = "orthogonal";
  /// How the bias starts.
  initializers::Initializer bias_initializer = "zeros";
  bool unit_forget_bias = true;  ///< LSTM only: the forget gate's bias starts at 1
  /// Penalty on the kernel added to the loss (none by default).
  regularizers::Regularizer kernel_regularizer{};
  /// Penalty on the recurrent kernel added to the loss (none by default).
  regularizers::Regularizer recurrent_regularizer{};
  /// Penalty on the bias added to the loss (none by default).
  regularizers::Regularizer bias_regularizer{};
  /// Projection of the kernel after each optimizer update (none by default).
  constraints::Constraint kernel_constraint{};
  /// Projection of the recurrent kernel after each optimizer update (none by default).
  constraints::Constraint recurrent_constraint{};
  /// Projection of the bias after each optimizer update (none by default).
  constraints::Constraint bias_constraint{};
  /// Output every step's output (batch, steps, units), not only the last (batch, units).
  bool return_sequences = false;
  /// Also output the final states: h (and c for LSTM), each (batch, units).
  bool return_state = false;
  /// Read the steps last to first (the output sequence is then reversed too, as in Keras).
  bool go_backwards = false;
  /// With a mask, output zeros at masked steps rather than repeating the previous output.
  bool zero_output_for_mask = false;
  /// Initializer seed; unset draws one from set_random_seed's stream.
  std::optional<std::uint64_t> seed{};
  /// The layer's name; "" gives it an automatic one from its class ("conv2d", "conv2d_1", ...).
  std::string name{};
};

/// LSTM, GRU and SimpleRNN share this class: the input projection of all steps as one matmul, the time
/// loop over Backend ops with Keras' masking, and the weight gradients of all steps as single
/// matmuls; only the cell (layers/lstm_cell.cpp, layers/gru_cell.cpp, layers/simple_rnn.cpp) differs.
class RecurrentLayer : public Layer {
 public:
  /// Which recurrent cell.
  enum class Cell : std::uint8_t { lstm, gru, simple_rnn };
  /// A `cell` layer of `units` units.
  RecurrentLayer(Cell cell, std::int64_t units, RecurrentOptions options);
  /// "LSTM", "GRU" or "SimpleRNN".
  std::string class_name() const override;
  bool supports_masking() const override { return true; }
  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& in) override;
  void build(const std::vector<Shape>& in) override;
  std::vector<Tensor> forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) override;
  std::vector<Tensor> backward(ReplicaContext& ctx, const std::vector<Tensor>& in, const std::vector<Tensor>& out,
                               const std::vector<Tensor>& grads, LayerState& st) override;
  std::vector<Tensor> compute_output_masks(ReplicaContext& ctx, const std::vector<Tensor>& in,
                                           const std::vector<Tensor>& out, const LayerState& st) override;
  std::vector<WeightGroup> weight_groups() override;
  Json get_config() const override;
  /// The size of the state and the output.
  std::int64_t units() const { return units_; }
  /// The settings it was made with.
  const RecurrentOptions& options() const { return options_; }

 private:
  int gates() const { return cell_ == Cell::lstm ? 4 : cell_ == Cell::gru ? 3 : 1; }
  std::size_t state_count() const { return cell_ == Cell::lstm ? 2 : 1; }
  Cell cell_;
  std::int64_t units_;
  RecurrentOptions options_;
  ActivationFn activation_, recurrent_activation_;
  Variable* kernel_ = nullptr;
  Variable* recurrent_kernel_ = nullptr;
  Variable* bias_ = nullptr;
};

// LSTM(32), LSTM(16, {.return_sequences = true}); GRU(32), ...
/// Keras' LSTM(units) over (batch, steps, features).
LayerRef LSTM(std::int64_t units, RecurrentOptions options = {});
/// Keras 3's GRU(units) (reset_after=True) over (batch, steps, features).
LayerRef GRU(std::int64_t units, RecurrentOptions options = {});

}  // namespace kerascpp::layers
