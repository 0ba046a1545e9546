#include "kerascpp/layers/elu.hpp"
#include "kerascpp/core/layer_config.hpp"

#include "layer_util.hpp"

namespace kerascpp::layers {

ELULayer::ELULayer(ELUOptions options)
    : ActivationLayer(activations::elu(options.alpha), {.name = options.name}), options_(std::move(options)) {}

// Keras 3.15's ELU leaves alpha out of its config (it has no get_config of its own), so a Keras
// model reloads with alpha=1.0; written here anyway: Keras' ELU(**config) takes it.
Json ELULayer::get_config() const {
  return detail::Json({{"name", name()}, {"alpha", detail::json_float(options_.alpha)}});
}

LayerRef ELU(ELUOptions options) { return std::make_shared<ELULayer>(std::move(options)); }

KERASCPP_REGISTER_LAYER("ELU", [](const LayerConfig& c) {
  return layers::ELU({.alpha = c.get<float>("alpha", 1.f), .name = c.name()});
});

}  // namespace kerascpp::layers
