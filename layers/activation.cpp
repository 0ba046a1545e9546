#include "kerascpp/layers/activation.hpp"
#include "kerascpp/layer_config.hpp"

#include "layer_util.hpp"

namespace kerascpp::layers {

ActivationLayer::ActivationLayer(const std::string& activation, ActivationOptions options)
    : Layer(std::move(options.name)), activation_name_(activation) {
  activation_ = activation_from_name(activation, "Activation");
  set_input_spec({});  // one float32 input of any shape
}

std::vector<Shape> ActivationLayer::compute_output_shapes(const std::vector<Shape>& in) { return {in[0]}; }

std::vector<Tensor> ActivationLayer::forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState&) {
  if (activation_ == ActivationKind::linear) return {in[0]};
  Tensor y(in[0].shape());
  ctx.backend->activation_forward(activation_, in[0], y);
  return {y};
}

std::vector<Tensor> ActivationLayer::backward(ReplicaContext& ctx, const std::vector<Tensor>&,
                                              const std::vector<Tensor>& out, const std::vector<Tensor>& grads,
                                              LayerState&) {
  if (activation_ == ActivationKind::linear) return {grads[0]};
  Tensor dx(grads[0].shape());
  ctx.backend->activation_backward(activation_, out[0], grads[0], dx);
  return {dx};
}

Json ActivationLayer::get_config() const {
  return detail::Json({{"name", name()}, {"activation", activation_name(activation_)}});
}

LayerRef Activation(const std::string& activation, ActivationOptions options) {
  return std::make_shared<ActivationLayer>(activation, std::move(options));
}

KERASCPP_REGISTER_LAYER("Activation", [](const LayerConfig& c) {
  return layers::Activation(c.str("activation", "linear"), {.name = c.name()});
});

}  // namespace kerascpp::layers
