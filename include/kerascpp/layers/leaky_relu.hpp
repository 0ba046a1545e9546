// LeakyReLU: Keras' layers.LeakyReLU(negative_slope=0.3): x for x >= 0, negative_slope * x below.
#pragma once
#include "kerascpp/layers/activation.hpp"

namespace kerascpp::layers {

/// LeakyReLU's settings, with Keras' defaults.
struct LeakyReLUOptions {
  float negative_slope = 0.3f;  ///< the layer's default (the activation leaky_relu's is 0.2)
  /// The layer's name; "" gives it an automatic one from its class ("conv2d", "conv2d_1", ...).
  std::string name{};
};

/// Keras' LeakyReLU layer (make it with LeakyReLU()).
class LeakyReLULayer : public ActivationLayer {
 public:
  /// A LeakyReLU with `options.negative_slope`.
  explicit LeakyReLULayer(LeakyReLUOptions options);
  std::string class_name() const override { return "LeakyReLU"; }
  Json get_config() const override;

 private:
  LeakyReLUOptions options_;
};

/// LeakyReLU(), LeakyReLU({.negative_slope = 0.2f}).
LayerRef LeakyReLU(LeakyReLUOptions options = {});

}  // namespace kerascpp::layers
