// RandomRotation: Keras' augmentation layer that, in training, rotates each image about its
// centre by an angle drawn from factor * 360 degrees; identity in inference.
#pragma once
#include <array>

#include "kerascpp/layers/random_affine.hpp"

namespace kerascpp::layers {

/// Keras' RandomRotation layer (channels_last).
class RandomRotationLayer : public RandomAffineLayer {
 public:
  /// factor: the range of the angle in fractions of a full turn ({-0.2, 0.2}: up to 72 degrees
  /// either way; Keras' single number f is {-f, f}); each within [-1, 1].
  RandomRotationLayer(AffineFactor factor, RandomAffineOptions options);
  std::string class_name() const override { return "RandomRotation"; }
  Json get_config() const override;

 protected:
  AffineTransform draw_transform(Rng& rng, std::int64_t height, std::int64_t width) const override;

 private:
  std::array<double, 2> factor_;
};

/// Keras' RandomRotation(factor, fill_mode="reflect", interpolation="bilinear", seed=None,
/// fill_value=0.0): a single number f for the range [-|f|, |f|].
LayerRef RandomRotation(double factor, RandomAffineOptions options = {});
/// The same with the range given as AffineFactor::pair(lower, upper).
LayerRef RandomRotation(AffineFactor factor, RandomAffineOptions options = {});

}  // namespace kerascpp::layers
