#include "kerascpp/layers/leaky_relu.hpp"
#include "kerascpp/core/layer_config.hpp"

#include "check.hpp"
#include "layer_util.hpp"

namespace kerascpp::layers {

namespace {

float checked_slope(const LeakyReLUOptions& o) {
  KERASCPP_CHECK_VALUE(o.negative_slope >= 0.f, "LeakyReLU '{}': negative_slope cannot be negative, got {}", o.name,
                       o.negative_slope);
  return o.negative_slope;
}

}  // namespace

LeakyReLULayer::LeakyReLULayer(LeakyReLUOptions options)
    : ActivationLayer(activations::leaky_relu(checked_slope(options)), {.name = options.name}),
      options_(std::move(options)) {}

Json LeakyReLULayer::get_config() const {
  return detail::Json({{"name", name()}, {"negative_slope", detail::json_float(options_.negative_slope)}});
}

LayerRef LeakyReLU(LeakyReLUOptions options) { return std::make_shared<LeakyReLULayer>(std::move(options)); }

KERASCPP_REGISTER_LAYER("LeakyReLU", [](const LayerConfig& c) {
  // Keras 2 wrote the slope as "alpha" (Keras 3 still reads it, with a deprecation warning).
  const float alpha = c.get<float>("alpha", 0.3f);
  return layers::LeakyReLU({.negative_slope = c.get<float>("negative_slope", alpha), .name = c.name()});
});

}  // namespace kerascpp::layers
