// Dropout: in training, zeroes a fraction `rate` of inputs and scales the rest by 1/(1-rate).
#pragma once
#include <optional>

#include "kerascpp/layer.hpp"

namespace kerascpp::layers {

struct DropoutOptions {
  std::optional<std::uint64_t> seed{};
  std::string name{};
};

class DropoutLayer : public Layer {
 public:
  DropoutLayer(float rate, DropoutOptions options);
  std::string class_name() const override { return "Dropout"; }
  bool supports_masking() const override { return true; }  // the mask passes through, as in Keras
  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& in) override;
  std::vector<Tensor> forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) override;
  std::vector<Tensor> backward(ReplicaContext& ctx, const std::vector<Tensor>& in, const std::vector<Tensor>& out,
                               const std::vector<Tensor>& grads, LayerState& st) override;
  Json get_config() const override;

 private:
  float rate_;
  std::uint64_t seed_;
};

LayerRef Dropout(float rate, DropoutOptions options = {});

}  // namespace kerascpp::layers
