// RandomZoom: Keras' augmentation layer that, in training, zooms each image about its centre by
// a factor drawn per image (1 + height_factor, and 1 + width_factor or the same); identity in
// inference. A positive factor zooms out (the image shrinks), a negative one zooms in, as in Keras.
#pragma once
#include <array>
#include <optional>

#include "kerascpp/layers/random_affine.hpp"

namespace kerascpp::layers {

/// Keras' RandomZoom layer (channels_last).
class RandomZoomLayer : public RandomAffineLayer {
 public:
  /// height_factor: the range of the vertical zoom minus 1, each within (-1, 1]; width_factor
  /// likewise, unset to zoom both axes by the same draw (keeping the aspect ratio).
  RandomZoomLayer(AffineFactor height_factor, std::optional<AffineFactor> width_factor, RandomAffineOptions options);
  std::string class_name() const override { return "RandomZoom"; }
  Json get_config() const override;

 protected:
  AffineTransform draw_transform(Rng& rng, std::int64_t height, std::int64_t width) const override;

 private:
  AffineFactor height_;
  std::optional<AffineFactor> width_;
};

/// Keras' RandomZoom(height_factor, width_factor=None, fill_mode="reflect",
/// interpolation="bilinear", seed=None, fill_value=0.0) with single numbers f (range [-|f|, |f|]).
LayerRef RandomZoom(double height_factor, std::optional<double> width_factor = std::nullopt,
                    RandomAffineOptions options = {});
/// The same with ranges: AffineFactor::pair(lower, upper) or AffineFactor::symmetric(f).
LayerRef RandomZoom(AffineFactor height_factor, std::optional<AffineFactor> width_factor,
                    RandomAffineOptions options = {});

}  // namespace kerascpp::layers
