#include "kerascpp/layers/identity.hpp"
#include "kerascpp/core/layer_config.hpp"

#include "layer_util.hpp"

namespace kerascpp::layers {

IdentityLayer::IdentityLayer(IdentityOptions options) : Layer(std::move(options.name)) {
  set_input_spec({});  // one float32 input of any shape
}

std::vector<Tensor> IdentityLayer::forward(ReplicaContext&, const std::vector<Tensor>& in, LayerState&) {
  return {in[0]};
}

std::vector<Tensor> IdentityLayer::backward(ReplicaContext&, const std::vector<Tensor>&, const std::vector<Tensor>&,
                                            const std::vector<Tensor>& grads, LayerState&) {
  return {grads[0]};
}

LayerRef Identity(IdentityOptions options) { return std::make_shared<IdentityLayer>(std::move(options)); }

KERASCPP_REGISTER_LAYER("Identity", [](const LayerConfig& c) { return layers::Identity({.name = c.name()}); });

}  // namespace kerascpp::layers
