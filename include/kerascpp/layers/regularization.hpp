// Keras' noise and structured dropout layers, active only in training (identity otherwise), each
// with its own draws per step and replica from the library's random streams, as Dropout:
//   GaussianNoise(0.1)      x + N(0, stddev²)
//   GaussianDropout(0.2)    x · N(1, rate / (1 − rate))
//   AlphaDropout(0.1)       dropped inputs set to SELU's negative saturation, then an affine map
//                           that keeps the mean and variance (for SELU networks)
//   SpatialDropout1D/2D/3D  Dropout of whole feature maps: one draw per (example, channel)
#pragma once
#include "kerascpp/core/layer.hpp"
#include "kerascpp/layers/dropout.hpp"

namespace kerascpp::layers {

/// Which of the layers above a NoiseLayer is.
enum class NoiseKind : std::uint8_t { gaussian_noise, gaussian_dropout, alpha_dropout, spatial_dropout };

/// GaussianNoise, GaussianDropout, AlphaDropout and SpatialDropout1D/2D/3D.
class NoiseLayer : public Layer {
 public:
  /// amount: the stddev (GaussianNoise) or the rate (the others); spatial_rank: SpatialDropout's 1, 2 or 3.
  NoiseLayer(NoiseKind kind, float amount, int spatial_rank, DropoutOptions options);
  std::string class_name() const override;
  bool supports_masking() const override { return true; }
  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& in) override { return {in[0]}; }
  std::vector<Tensor> forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) override;
  std::vector<Tensor> backward(ReplicaContext& ctx, const std::vector<Tensor>& in, const std::vector<Tensor>& out,
                               const std::vector<Tensor>& grads, LayerState& st) override;
  Json get_config() const override;

 private:
  Tensor draw_factors(Backend& be, const Tensor& x, std::uint64_t seed) const;
  NoiseKind kind_;
  float amount_;
  int spatial_rank_;
  std::optional<std::uint64_t> config_seed_;  // Keras' seed argument, written back to the config
  std::uint64_t seed_;
};

/// GaussianNoise(stddev): adds zero-mean Gaussian noise in training.
LayerRef GaussianNoise(float stddev, DropoutOptions options = {});
/// GaussianDropout(rate): multiplies by 1-mean Gaussian noise of variance rate / (1 - rate) in training.
LayerRef GaussianDropout(float rate, DropoutOptions options = {});
/// AlphaDropout(rate): dropout that keeps SELU's self-normalising mean and variance.
LayerRef AlphaDropout(float rate, DropoutOptions options = {});
/// SpatialDropout1D(rate): drops whole channels of (batch, steps, channels).
LayerRef SpatialDropout1D(float rate, DropoutOptions options = {});
/// SpatialDropout2D(rate): drops whole channels of (batch, height, width, channels).
LayerRef SpatialDropout2D(float rate, DropoutOptions options = {});
/// SpatialDropout3D(rate): drops whole channels of (batch, depth, height, width, channels).
LayerRef SpatialDropout3D(float rate, DropoutOptions options = {});

}  // namespace kerascpp::layers
