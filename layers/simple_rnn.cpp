// SimpleRNN (see kerascpp/layers/simple_rnn.hpp): its cell step and its registration; the time
// loop, masks and weight gradients are RecurrentLayer's (layers/recurrent.cpp). Composed from
// Backend ops for the reason recurrent_cells.hpp gives (oneDNN's vanilla RNN primitive has no
// per-example step masks, and a fused op would need a CUDA kernel too): here the step is one
// activation on top of the matmuls the loop already does.
#include "kerascpp/layers/simple_rnn.hpp"

#include "recurrent_cells.hpp"

namespace kerascpp::layers {

namespace cells {

void simple_rnn_forward(Backend& be, const ActivationFn& act, const Tensor& z, Tensor& h) {
  be.activation_forward(act, z, h);
}

void simple_rnn_backward(Backend& be, const ActivationFn& act, const Tensor& h, const Tensor& dh, Tensor& dz) {
  be.activation_backward(act, h, dh, dz);
}

}  // namespace cells

LayerRef SimpleRNN(std::int64_t units, RecurrentOptions options) {
  return std::make_shared<RecurrentLayer>(RecurrentLayer::Cell::simple_rnn, units, std::move(options));
}

KERASCPP_REGISTER_LAYER("SimpleRNN", [](const LayerConfig& c) {
  return SimpleRNN(c.required<std::int64_t>("units"), recurrent_options_from_config(c));
});

}  // namespace kerascpp::layers
