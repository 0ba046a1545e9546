// LSTM and GRU: Keras 3's layers.LSTM(units) and layers.GRU(units) (reset_after=True) over a
// (batch, steps, features) input, with Keras' weight layouts and gate orders
//   LSTM: kernel [features, 4·units], recurrent_kernel [units, 4·units], bias [4·units], gates i, f, c, o
//   GRU:  kernel [features, 3·units], recurrent_kernel [units, 3·units], bias [2, 3·units]
//         (row 0 the input bias, row 1 the recurrent bias), gates z, r, h
// stored in .weights.h5 under the layer's "cell" sublayer group as Keras writes them.
//
// Masks, as Keras' rnn(): at a step whose Keras mask ([B, T], e.g. from Embedding(mask_zero))
// is 0 the states are carried over unchanged and the output repeats the previous output (zeros
// before the first kept step). The output mask is the input mask with return_sequences, none
// otherwise. go_backwards reads the steps last to first and, like Keras, returns the sequence in
// that (reversed) order.
//
// Not supported: return_state, stateful, dropout/recurrent_dropout, unroll, GRU reset_after=False,
// activations other than the Backend's (tanh, sigmoid, relu, linear).
#pragma once
#include <optional>

#include "kerascpp/layer.hpp"

namespace kerascpp::layers {

struct RecurrentOptions {
  std::string activation = "tanh";
  std::string recurrent_activation = "sigmoid";
  bool use_bias = true;
  initializers::Initializer kernel_initializer = "glorot_uniform";
  initializers::Initializer recurrent_initializer = "orthogonal";
  initializers::Initializer bias_initializer = "zeros";
  bool unit_forget_bias = true;  // LSTM only: the forget gate's bias starts at 1
  regularizers::Regularizer kernel_regularizer{};
  regularizers::Regularizer recurrent_regularizer{};
  regularizers::Regularizer bias_regularizer{};
  constraints::Constraint kernel_constraint{};
  constraints::Constraint recurrent_constraint{};
  constraints::Constraint bias_constraint{};
  bool return_sequences = false;
  bool go_backwards = false;
  std::optional<std::uint64_t> seed{};
  std::string name{};
};

// LSTM and GRU share this class: the input projection of all steps as one matmul, the time
// loop over Backend ops with Keras' masking, and the weight gradients of all steps as single
// matmuls; only the cell (layers/lstm_cell.cpp, layers/gru_cell.cpp) differs.
class RecurrentLayer : public Layer {
 public:
  enum class Cell : std::uint8_t { lstm, gru };
  RecurrentLayer(Cell cell, std::int64_t units, RecurrentOptions options);
  std::string class_name() const override { return cell_ == Cell::lstm ? "LSTM" : "GRU"; }
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
  std::int64_t units() const { return units_; }

 private:
  int gates() const { return cell_ == Cell::lstm ? 4 : 3; }
  Cell cell_;
  std::int64_t units_;
  RecurrentOptions options_;
  ActivationFn activation_, recurrent_activation_;
  Variable* kernel_ = nullptr;
  Variable* recurrent_kernel_ = nullptr;
  Variable* bias_ = nullptr;
};

// LSTM(32), LSTM(16, {.return_sequences = true}); GRU(32), ...
LayerRef LSTM(std::int64_t units, RecurrentOptions options = {});
LayerRef GRU(std::int64_t units, RecurrentOptions options = {});

}  // namespace kerascpp::layers
