// LeakyReLU: Keras' layers.LeakyReLU(negative_slope=0.3): x for x >= 0, negative_slope * x below.
#pragma once
#include "kerascpp/layers/activation.hpp"

namespace kerascpp::layers {

struct LeakyReLUOptions {
  float negative_slope = 0.3f;  // the layer's default (the activation leaky_relu's is 0.2)
  std::string name{};
};

class LeakyReLULayer : public ActivationLayer {
 public:
  explicit LeakyReLULayer(LeakyReLUOptions options);
  std::string class_name() const override { return "LeakyReLU"; }
  Json get_config() const override;

 private:
  LeakyReLUOptions options_;
};

// LeakyReLU(), LeakyReLU({.negative_slope = 0.2f}).
LayerRef LeakyReLU(LeakyReLUOptions options = {});

}  // namespace kerascpp::layers
