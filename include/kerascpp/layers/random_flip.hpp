// RandomFlip: Keras' augmentation layer that, in training, flips each image of a
// (batch, height, width, channels) batch left-right and/or upside down with probability 1/2;
// identity in inference. Part of the model (saved in .keras; predict leaves images as they are).
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "kerascpp/core/layer.hpp"

namespace kerascpp::layers {

/// RandomFlip's settings beside the mode.
struct RandomFlipOptions {
  /// Seed of the flip decisions; unset draws one from set_random_seed's stream. Each training
  /// step and replica draws its own decisions from it, so a rerun with the same seeds replays them.
  std::optional<std::uint64_t> seed{};
  /// The layer's name; "" gives it an automatic one from its class ("random_flip", ...).
  std::string name{};
};

/// Keras' RandomFlip layer (channels_last).
class RandomFlipLayer : public Layer {
 public:
  /// mode: "horizontal" (left-right), "vertical" (upside down) or "horizontal_and_vertical"
  /// (each decided on its own, as Keras does).
  RandomFlipLayer(std::string mode, RandomFlipOptions options);
  std::string class_name() const override { return "RandomFlip"; }
  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& in) override { return {in[0]}; }
  std::vector<Tensor> forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) override;
  std::vector<Tensor> backward(ReplicaContext& ctx, const std::vector<Tensor>& in, const std::vector<Tensor>& out,
                               const std::vector<Tensor>& grads, LayerState& st) override;
  Json get_config() const override;

 private:
  std::string mode_;
  std::uint64_t seed_;
  bool seed_given_;
};

/// Keras' RandomFlip(mode="horizontal_and_vertical", seed=None).
LayerRef RandomFlip(std::string mode = "horizontal_and_vertical", RandomFlipOptions options = {});

}  // namespace kerascpp::layers
