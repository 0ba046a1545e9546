// The base of Keras' geometric augmentation layers (RandomRotation, RandomZoom,
// RandomTranslation): in training each image of a (batch, height, width, channels) batch is
// resampled through its own randomly drawn affine map; identity in inference.
#pragma once
#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

#include "kerascpp/core/layer.hpp"
#include "kerascpp/core/random.hpp"

namespace kerascpp::layers {

/// The sampling settings the three layers share, with Keras' defaults.
struct RandomAffineOptions {
  /// Where a sample falls outside the image: "reflect" (d c b a | a b c d | d c b a), "wrap"
  /// (a b c d | a b c d), "constant" (fill_value) or "nearest" (the edge pixel).
  std::string fill_mode = "reflect";
  /// "bilinear" or "nearest".
  std::string interpolation = "bilinear";
  /// The value of samples outside the image for fill_mode "constant".
  float fill_value = 0.f;
  /// Seed of the draws; unset draws one from set_random_seed's stream. Each training step and
  /// replica draws anew from it, so a rerun with the same seeds replays them.
  std::optional<std::uint64_t> seed{};
  /// The layer's name; "" gives it an automatic one from its class.
  std::string name{};
};

/// A Keras factor argument: the range (lower, upper) and whether the user gave it as one number
/// f (the range {-|f|, |f|}), which get_config writes back as that number.
struct AffineFactor {
  std::array<double, 2> range{};  ///< (lower, upper)
  bool single = false;            ///< given as one number f
  /// f: the range {-|f|, |f|}.
  static AffineFactor symmetric(double f) { return {{-std::abs(f), std::abs(f)}, true}; }
  /// (lower, upper) as given.
  static AffineFactor pair(double lower, double upper) { return {{lower, upper}, false}; }
};

/// Keras' affine map of one image, [a0, a1, a2, b0, b1, b2, c0, c1]: output pixel (x, y) reads
/// the input at ((a0 x + a1 y + a2) / k, (b0 x + b1 y + b2) / k), k = c0 x + c1 y + 1.
using AffineTransform = std::array<double, 8>;

/// What RandomRotation, RandomZoom and RandomTranslation have in common; each says how it draws
/// an image's map (draw_transform) and what its config holds beside the shared keys.
class RandomAffineLayer : public Layer {
 public:
  /// The shared options (fill mode, interpolation, seed, ...).
  explicit RandomAffineLayer(RandomAffineOptions options);
  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& in) override { return {in[0]}; }
  std::vector<Tensor> forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) override;
  std::vector<Tensor> backward(ReplicaContext& ctx, const std::vector<Tensor>& in, const std::vector<Tensor>& out,
                               const std::vector<Tensor>& grads, LayerState& st) override;
  /// The options as constructed.
  const RandomAffineOptions& options() const { return options_; }

 protected:
  /// One image's map, for an image of height x width, from `rng`.
  virtual AffineTransform draw_transform(Rng& rng, std::int64_t height, std::int64_t width) const = 0;
  /// ValueError naming the layer for an unknown fill_mode or interpolation; each subclass calls
  /// it from its constructor (the base's cannot name the layer: its class is not set yet).
  void check_options() const;
  /// The shared config keys (name, data_format, fill_mode, fill_value, interpolation, seed) around
  /// the layer's own (`own`: a JSON object).
  Json config_with(const Json& own) const;

 private:
  RandomAffineOptions options_;
  std::uint64_t seed_;
};

/// `factor` itself after checking both ends lie in [low, high] (or (low, high] when
/// !low_inclusive): ValueError naming `layer` and `what` otherwise.
AffineFactor checked_factor(const AffineFactor& factor, double low, bool low_inclusive, double high,
                            const std::string& layer, const std::string& what);
/// A draw uniform between the factor's two ends (in either order).
double draw_in(const AffineFactor& factor, Rng& rng);
/// The factor as Keras' config holds it: the number, or the pair.
Json factor_json(const AffineFactor& factor);

}  // namespace kerascpp::layers
