// RandomTranslation: per image a shift of (u * height, v * width) pixels, u and v uniform in the
// factors' ranges, as Keras' translation matrix [1, 0, -dx, 0, 1, -dy, 0, 0], resampled by
// RandomAffineLayer. Keras draws the height shift first.
#include "kerascpp/layers/random_translation.hpp"

#include "random_affine_config.hpp"

namespace kerascpp::layers {

RandomTranslationLayer::RandomTranslationLayer(AffineFactor height_factor, AffineFactor width_factor,
                                               RandomAffineOptions options)
    : RandomAffineLayer(std::move(options)),
      height_(checked_factor(height_factor, -1.0, true, 1.0, "RandomTranslation '" + name() + "'", "height_factor")),
      width_(checked_factor(width_factor, -1.0, true, 1.0, "RandomTranslation '" + name() + "'", "width_factor")) {
  check_options();
}

AffineTransform RandomTranslationLayer::draw_transform(Rng& rng, std::int64_t height, std::int64_t width) const {
  const double dy = draw_in(height_, rng) * static_cast<double>(height);
  const double dx = draw_in(width_, rng) * static_cast<double>(width);
  return {1.0, 0.0, -dx, 0.0, 1.0, -dy, 0.0, 0.0};
}

Json RandomTranslationLayer::get_config() const {
  Json own = Json::object();
  own["height_factor"] = factor_json(height_);
  own["width_factor"] = factor_json(width_);
  return config_with(own);
}

LayerRef RandomTranslation(double height_factor, double width_factor, RandomAffineOptions options) {
  return RandomTranslation(AffineFactor::symmetric(height_factor), AffineFactor::symmetric(width_factor),
                           std::move(options));
}

LayerRef RandomTranslation(AffineFactor height_factor, AffineFactor width_factor, RandomAffineOptions options) {
  return std::make_shared<RandomTranslationLayer>(height_factor, width_factor, std::move(options));
}

KERASCPP_REGISTER_LAYER("RandomTranslation", [](const LayerConfig& c) {
  return layers::RandomTranslation(detail::factor_from(c, "height_factor"), detail::factor_from(c, "width_factor"),
                                   detail::affine_options_from(c));
});

}  // namespace kerascpp::layers
