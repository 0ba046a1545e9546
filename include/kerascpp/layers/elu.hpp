// ELU: Keras' layers.ELU(alpha=1.0): x for x >= 0, alpha * (exp(x) - 1) below.
#pragma once
#include "kerascpp/layers/activation.hpp"

namespace kerascpp::layers {

struct ELUOptions {
  float alpha = 1.f;
  std::string name{};
};

class ELULayer : public ActivationLayer {
 public:
  explicit ELULayer(ELUOptions options);
  std::string class_name() const override { return "ELU"; }
  Json get_config() const override;

 private:
  ELUOptions options_;
};

// ELU(), ELU({.alpha = 0.5f}).
LayerRef ELU(ELUOptions options = {});

}  // namespace kerascpp::layers
