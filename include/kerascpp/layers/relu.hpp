// ReLU: Keras' layers.ReLU(max_value=None, negative_slope=0.0, threshold=0.0), the activation
// relu with its arguments: x for threshold < x (capped at max_value), negative_slope * (x -
// threshold) below it.
#pragma once
#include <optional>

#include "kerascpp/layers/activation.hpp"

namespace kerascpp::layers {

/// ReLU's settings, with Keras' names and defaults.
struct ReLUOptions {
  std::optional<float> max_value = std::nullopt;  ///< None: no cap
  /// The slope below the threshold.
  float negative_slope = 0.f;
  /// Inputs at or below it take the negative slope.
  float threshold = 0.f;
  /// The layer's name; "" gives it an automatic one from its class ("conv2d", "conv2d_1", ...).
  std::string name{};
};

/// Keras' ReLU layer (make it with ReLU()).
class ReLULayer : public ActivationLayer {
 public:
  /// A ReLU with the cap, slope and threshold of `options`.
  explicit ReLULayer(ReLUOptions options);
  std::string class_name() const override { return "ReLU"; }
  Json get_config() const override;

 private:
  ReLUOptions options_;
};

/// ReLU(), ReLU({.max_value = 6.f}), ReLU({.negative_slope = 0.1f, .threshold = 0.5f}).
LayerRef ReLU(ReLUOptions options = {});

}  // namespace kerascpp::layers
