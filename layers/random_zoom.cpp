// RandomZoom: per image a zoom 1 + u (u uniform in the factor's range) about the centre, as
// Keras' zoom matrix [zx, 0, (W-1)/2 (1-zx), 0, zy, (H-1)/2 (1-zy), 0, 0] (zx = zy without a
// width_factor), resampled by RandomAffineLayer.
#include "kerascpp/layers/random_zoom.hpp"

#include "random_affine_config.hpp"

namespace kerascpp::layers {

RandomZoomLayer::RandomZoomLayer(AffineFactor height_factor, std::optional<AffineFactor> width_factor,
                                 RandomAffineOptions options)
    : RandomAffineLayer(std::move(options)),
      height_(checked_factor(height_factor, -1.0, false, 1.0, "RandomZoom '" + name() + "'", "height_factor")) {
  check_options();
  if (width_factor)
    width_ = checked_factor(*width_factor, -1.0, false, 1.0, "RandomZoom '" + name() + "'", "width_factor");
}

AffineTransform RandomZoomLayer::draw_transform(Rng& rng, std::int64_t height, std::int64_t width) const {
  const double zy = 1.0 + draw_in(height_, rng);
  const double zx = width_ ? 1.0 + draw_in(*width_, rng) : zy;
  return {zx,  0.0, (static_cast<double>(width) - 1.0) / 2.0 * (1.0 - zx),
          0.0, zy,  (static_cast<double>(height) - 1.0) / 2.0 * (1.0 - zy),
          0.0, 0.0};
}

Json RandomZoomLayer::get_config() const {
  Json own = Json::object();
  own["height_factor"] = factor_json(height_);
  own["width_factor"] = width_ ? factor_json(*width_) : Json(nullptr);
  return config_with(own);
}

LayerRef RandomZoom(double height_factor, std::optional<double> width_factor, RandomAffineOptions options) {
  std::optional<AffineFactor> width;
  if (width_factor) width = AffineFactor::symmetric(*width_factor);
  return RandomZoom(AffineFactor::symmetric(height_factor), width, std::move(options));
}

LayerRef RandomZoom(AffineFactor height_factor, std::optional<AffineFactor> width_factor, RandomAffineOptions options) {
  return std::make_shared<RandomZoomLayer>(height_factor, width_factor, std::move(options));
}

KERASCPP_REGISTER_LAYER("RandomZoom", [](const LayerConfig& c) {
  std::optional<AffineFactor> width;
  if (const Json* w = c.find("width_factor"); w && !w->is_null()) width = detail::factor_from(c, "width_factor");
  return layers::RandomZoom(detail::factor_from(c, "height_factor"), width, detail::affine_options_from(c));
});

}  // namespace kerascpp::layers
