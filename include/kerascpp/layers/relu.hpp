// ReLU: Keras' layers.ReLU(max_value=None, negative_slope=0.0, threshold=0.0), the activation
// relu with its arguments: x for threshold < x (capped at max_value), negative_slope * (x -
// threshold) below it.
#pragma once
#include <optional>

#include "kerascpp/layers/activation.hpp"

namespace kerascpp::layers {

struct ReLUOptions {
  std::optional<float> max_value = std::nullopt;  // None: no cap
  float negative_slope = 0.f;
  float threshold = 0.f;
  std::string name{};
};

class ReLULayer : public ActivationLayer {
 public:
  explicit ReLULayer(ReLUOptions options);
  std::string class_name() const override { return "ReLU"; }
  Json get_config() const override;

 private:
  ReLUOptions options_;
};

// ReLU(), ReLU({.max_value = 6.f}), ReLU({.negative_slope = 0.1f, .threshold = 0.5f}).
LayerRef ReLU(ReLUOptions options = {});

}  // namespace kerascpp::layers
