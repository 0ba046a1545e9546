// ELU: Keras' layers.ELU(alpha=1.0): x for x >= 0, alpha * (exp(x) - 1) below.
#pragma once
#include "kerascpp/layers/activation.hpp"

namespace kerascpp::layers {

/// ELU's settings, with Keras' defaults.
struct ELUOptions {
  /// The scale of the negative part: alpha * (exp(x) - 1) for x < 0.
  float alpha = 1.f;
  /// The layer's name; "" gives it an automatic one from its class ("conv2d", "conv2d_1", ...).
  std::string name{};
};

/// Keras' ELU layer (make it with ELU()).
class ELULayer : public ActivationLayer {
 public:
  /// An ELU with `options.alpha`.
  explicit ELULayer(ELUOptions options);
  std::string class_name() const override { return "ELU"; }
  Json get_config() const override;

 private:
  ELUOptions options_;
};

/// ELU(), ELU({.alpha = 0.5f}).
LayerRef ELU(ELUOptions options = {});

}  // namespace kerascpp::layers
