// RandomTranslation: Keras' augmentation layer that, in training, shifts each image by fractions
// of its height and width drawn per image; identity in inference.
#pragma once
#include <array>

#include "kerascpp/layers/random_affine.hpp"

namespace kerascpp::layers {

/// Keras' RandomTranslation layer (channels_last).
class RandomTranslationLayer : public RandomAffineLayer {
 public:
  /// height_factor, width_factor: the ranges of the shift in fractions of the height and width,
  /// each within [-1, 1].
  RandomTranslationLayer(AffineFactor height_factor, AffineFactor width_factor, RandomAffineOptions options);
  std::string class_name() const override { return "RandomTranslation"; }
  Json get_config() const override;

 protected:
  AffineTransform draw_transform(Rng& rng, std::int64_t height, std::int64_t width) const override;

 private:
  AffineFactor height_, width_;
};

/// Keras' RandomTranslation(height_factor, width_factor, fill_mode="reflect",
/// interpolation="bilinear", seed=None, fill_value=0.0) with single numbers f (range [-|f|, |f|]).
LayerRef RandomTranslation(double height_factor, double width_factor, RandomAffineOptions options = {});
/// The same with ranges: AffineFactor::pair(lower, upper) or AffineFactor::symmetric(f).
LayerRef RandomTranslation(AffineFactor height_factor, AffineFactor width_factor, RandomAffineOptions options = {});

}  // namespace kerascpp::layers
