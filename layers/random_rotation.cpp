// RandomRotation: an angle per image, uniform in factor * 360 degrees, and Keras' rotation about
// the centre ((width - 1) / 2, (height - 1) / 2), resampled by RandomAffineLayer.
#include "kerascpp/layers/random_rotation.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "random_affine_config.hpp"

namespace kerascpp::layers {

RandomRotationLayer::RandomRotationLayer(AffineFactor factor, RandomAffineOptions options)
    : RandomAffineLayer(std::move(options)) {
  check_options();
  factor = checked_factor(factor, -1.0, true, 1.0, "RandomRotation '" + name() + "'", "factor");
  // Keras keeps (and saves) the sorted range.
  factor_ = {std::min(factor.range[0], factor.range[1]), std::max(factor.range[0], factor.range[1])};
}

AffineTransform RandomRotationLayer::draw_transform(Rng& rng, std::int64_t height, std::int64_t width) const {
  const double degrees = 360.0 * draw_in(AffineFactor::pair(factor_[0], factor_[1]), rng);
  const double angle = degrees * std::numbers::pi / 180.0;
  const double cx = 0.5 * static_cast<double>(width - 1), cy = 0.5 * static_cast<double>(height - 1);
  const double c = std::cos(angle), s = std::sin(angle);
  // Keras' _compute_affine_matrix with scale 1, no shear and no translation.
  return {c, -s, cx - cx * c + cy * s, s, c, cy - cx * s - cy * c, 0.0, 0.0};
}

Json RandomRotationLayer::get_config() const {
  Json own = Json::object();
  own["factor"] = Json::array({factor_[0], factor_[1]});
  return config_with(own);
}

LayerRef RandomRotation(double factor, RandomAffineOptions options) {
  return RandomRotation(AffineFactor::symmetric(factor), std::move(options));
}

LayerRef RandomRotation(AffineFactor factor, RandomAffineOptions options) {
  return std::make_shared<RandomRotationLayer>(factor, std::move(options));
}

KERASCPP_REGISTER_LAYER("RandomRotation", [](const LayerConfig& c) {
  return layers::RandomRotation(detail::factor_from(c, "factor"), detail::affine_options_from(c));
});

}  // namespace kerascpp::layers
