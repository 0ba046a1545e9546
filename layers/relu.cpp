#include "kerascpp/layers/relu.hpp"
#include "kerascpp/core/layer_config.hpp"

#include "check.hpp"
#include "layer_util.hpp"

namespace kerascpp::layers {

namespace {

// Keras' checks (keras/src/layers/activations/relu.py), before the activation is made.
const ReLUOptions& checked(const ReLUOptions& o) {
  const std::string where = fmt::format("ReLU '{}'", o.name);
  KERASCPP_CHECK_VALUE(!o.max_value || *o.max_value >= 0.f,
                       "{}: max_value cannot be negative, got {}; pass None (std::nullopt) for no cap", where,
                       *o.max_value);
  KERASCPP_CHECK_VALUE(o.negative_slope >= 0.f, "{}: negative_slope cannot be negative, got {}", where,
                       o.negative_slope);
  KERASCPP_CHECK_VALUE(o.threshold >= 0.f, "{}: threshold cannot be negative, got {}", where, o.threshold);
  return o;
}

}  // namespace

ReLULayer::ReLULayer(ReLUOptions options)
    : ActivationLayer(
          activations::relu(checked(options).negative_slope,
                            options.max_value.value_or(std::numeric_limits<float>::infinity()), options.threshold),
          {.name = options.name}),
      options_(std::move(options)) {}

Json ReLULayer::get_config() const {
  return detail::Json(
      {{"name", name()},
       {"max_value", options_.max_value ? Json(detail::json_float(*options_.max_value)) : Json(nullptr)},
       {"negative_slope", detail::json_float(options_.negative_slope)},
       {"threshold", detail::json_float(options_.threshold)}});
}

LayerRef ReLU(ReLUOptions options) { return std::make_shared<ReLULayer>(std::move(options)); }

KERASCPP_REGISTER_LAYER("ReLU", [](const LayerConfig& c) {
  ReLUOptions o;
  if (c.find("max_value")) o.max_value = c.get<float>("max_value", 0.f);
  o.negative_slope = c.get<float>("negative_slope", 0.f);
  o.threshold = c.get<float>("threshold", 0.f);
  o.name = c.name();
  return layers::ReLU(std::move(o));
});

}  // namespace kerascpp::layers
