// Dropout: in training, zeroes a fraction `rate` of inputs and scales the rest by 1/(1-rate).
#pragma once
#include <optional>

#include "kerascpp/core/layer.hpp"

namespace kerascpp::layers {

/// Dropout's settings.
struct DropoutOptions {
  /// Seed of the dropout masks; unset draws one from set_random_seed's stream.
  std::optional<std::uint64_t> seed{};
  /// The layer's name; "" gives it an automatic one from its class ("conv2d", "conv2d_1", ...).
  std::string name{};
};

/// Keras' Dropout (make it with Dropout()).
class DropoutLayer : public Layer {
 public:
  /// Drops a fraction `rate` (in [0, 1)) of the inputs in training.
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

/// Keras' Dropout(rate): in training zeroes a fraction `rate` of the inputs and scales the rest by 1/(1-rate); identity
/// in inference.
LayerRef Dropout(float rate, DropoutOptions options = {});

}  // namespace kerascpp::layers
