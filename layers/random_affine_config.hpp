// Reading RandomRotation / RandomZoom / RandomTranslation's shared config keys back from Keras.
#pragma once
#include <fmt/format.h>

#include <string>

#include "kerascpp/core/layer_config.hpp"
#include "kerascpp/layers/random_affine.hpp"

namespace kerascpp::detail {

// A factor key: a number f (the range {-|f|, |f|}) or a pair of numbers.
inline layers::AffineFactor factor_from(const LayerConfig& c, const char* key) {
  const Json* v = c.find(key);
  if (!v || v->is_null()) c.fail(fmt::format("'{}' must be set", key));
  if (v->is_number()) return layers::AffineFactor::symmetric(v->get<double>());
  if (v->is_array() && v->size() == 2 && (*v)[0].is_number() && (*v)[1].is_number())
    return layers::AffineFactor::pair((*v)[0].get<double>(), (*v)[1].get<double>());
  c.fail(fmt::format("'{}' is {}: expected a number or a pair of numbers", key, v->dump()));
}

// fill_mode, interpolation, fill_value, seed and name, with Keras' defaults.
inline layers::RandomAffineOptions affine_options_from(const LayerConfig& c) {
  c.expect_channels_last();
  layers::RandomAffineOptions o{.fill_mode = c.str("fill_mode", "reflect"),
                                .interpolation = c.str("interpolation", "bilinear"),
                                .fill_value = c.get<float>("fill_value", 0.f),
                                .name = c.name()};
  if (const Json* s = c.find("seed"); s && !s->is_null()) o.seed = s->get<std::uint64_t>();
  return o;
}

}  // namespace kerascpp::detail
