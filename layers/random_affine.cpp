// RandomRotation, RandomZoom and RandomTranslation's shared part: the draws and the resampling.
// The resampling is Keras' affine_transform (each output pixel reads the input at its mapped
// point, bilinear or nearest, with the fill mode deciding what lies outside the image). It runs
// on the host between two copies, against the house rule that layers compute through Backend
// ops: no Backend op gathers at per-image, per-pixel coordinates (a rotation is not separable
// into Resizing's two matmuls), and this change may not add Backend virtuals. It runs only in
// training; predict and evaluate pass the batch through untouched. Its backward scatters each
// output gradient back through the same taps (the adjoint of the sampling).
#include "kerascpp/layers/random_affine.hpp"

#include <algorithm>
#include <cmath>

#include "check.hpp"
#include "layer_util.hpp"

namespace kerascpp::layers {
namespace {

// Index `i` of an axis of `n` pixels under `fill_mode`; -1 for "constant" outside the axis.
std::int64_t fill_index(std::int64_t i, std::int64_t n, const std::string& fill_mode) {
  if (i >= 0 && i < n) return i;
  if (fill_mode == "constant") return -1;
  if (fill_mode == "nearest") return std::clamp<std::int64_t>(i, 0, n - 1);
  if (fill_mode == "wrap") return ((i % n) + n) % n;
  const std::int64_t m = ((i % (2 * n)) + 2 * n) % (2 * n);  // reflect: period 2n, edges repeated
  return m < n ? m : 2 * n - 1 - m;
}

// One interpolation tap along an axis: a source index (-1: the constant fill) and its weight.
struct Tap {
  std::int64_t index;
  double weight;
};

// The taps of coordinate `c` on an axis of `n` pixels: two (bilinear) or one (nearest, rounding
// half up as scipy's order-0 map_coordinates does).
int axis_taps(double c, std::int64_t n, const RandomAffineOptions& o, Tap* taps) {
  if (o.interpolation == "nearest") {
    taps[0] = {fill_index(static_cast<std::int64_t>(std::floor(c + 0.5)), n, o.fill_mode), 1.0};
    return 1;
  }
  const double lo = std::floor(c);
  const double w = c - lo;
  taps[0] = {fill_index(static_cast<std::int64_t>(lo), n, o.fill_mode), 1.0 - w};
  taps[1] = {fill_index(static_cast<std::int64_t>(lo) + 1, n, o.fill_mode), w};
  return 2;
}

// Calls visit(output offset, input offset or -1, weight) for every tap of image n's output pixels
// (offsets of the pixel's first channel in the batch).
template <class Visit>
void for_each_tap(const Shape& shape, std::int64_t n, const AffineTransform& t, const RandomAffineOptions& o,
                  Visit&& visit) {
  const std::int64_t H = shape[1], W = shape[2], C = shape[3];
  for (std::int64_t y = 0; y < H; ++y)
    for (std::int64_t x = 0; x < W; ++x) {
      const double xd = static_cast<double>(x), yd = static_cast<double>(y);
      const double k = t[6] * xd + t[7] * yd + 1.0;
      Tap ty[2], tx[2];
      const int ny = axis_taps((t[3] * xd + t[4] * yd + t[5]) / k, H, o, ty);
      const int nx = axis_taps((t[0] * xd + t[1] * yd + t[2]) / k, W, o, tx);
      const std::int64_t out = ((n * H + y) * W + x) * C;
      for (int i = 0; i < ny; ++i)
        for (int j = 0; j < nx; ++j) {
          const bool outside = ty[i].index < 0 || tx[j].index < 0;
          visit(out, outside ? -1 : ((n * H + ty[i].index) * W + tx[j].index) * C, ty[i].weight * tx[j].weight);
        }
    }
}

AffineTransform transform_at(const std::vector<float>& saved, std::int64_t n) {
  AffineTransform t{};
  for (std::size_t k = 0; k < 8; ++k) t[k] = saved[static_cast<std::size_t>(n) * 8 + k];
  return t;
}

}  // namespace

AffineFactor checked_factor(const AffineFactor& factor, double low, bool low_inclusive, double high,
                            const std::string& layer, const std::string& what) {
  for (double f : factor.range)
    KERASCPP_CHECK_VALUE((low_inclusive ? f >= low : f > low) && f <= high, "{}: {} must lie in {}{}, {}], got {}",
                         layer, what, low_inclusive ? "[" : "(", low, high, f);
  return factor;
}

double draw_in(const AffineFactor& factor, Rng& rng) {
  const double lower = std::min(factor.range[0], factor.range[1]), upper = std::max(factor.range[0], factor.range[1]);
  return lower + (upper - lower) * rng.uniform_double();
}

Json factor_json(const AffineFactor& factor) {
  return factor.single ? Json(factor.range[1]) : Json::array({factor.range[0], factor.range[1]});
}

RandomAffineLayer::RandomAffineLayer(RandomAffineOptions options)
    : Layer(options.name), options_(std::move(options)), seed_(options_.seed ? *options_.seed : next_random_seed()) {
  set_input_spec(detail::nhwc_image_spec());
}

void RandomAffineLayer::check_options() const {
  const std::string& f = options_.fill_mode;
  KERASCPP_CHECK_VALUE(f == "reflect" || f == "wrap" || f == "constant" || f == "nearest",
                       "{} '{}': fill_mode must be \"reflect\", \"wrap\", \"constant\" or \"nearest\", got \"{}\"",
                       class_name(), name(), f);
  KERASCPP_CHECK_VALUE(options_.interpolation == "bilinear" || options_.interpolation == "nearest",
                       "{} '{}': interpolation must be \"bilinear\" or \"nearest\", got \"{}\"", class_name(), name(),
                       options_.interpolation);
}

std::vector<Tensor> RandomAffineLayer::forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) {
  st.saved.clear();
  if (!ctx.training || in[0].numel() == 0) return {in[0]};
  // The replica's stream advances every step: draws differ per step and replica yet replay exactly.
  Rng rng(seed_ ^ ctx.rng.next_u64());
  const Shape& shape = in[0].shape();
  std::vector<float> transforms;
  for (std::int64_t n = 0; n < shape[0]; ++n)
    for (double v : draw_transform(rng, shape[1], shape[2])) transforms.push_back(static_cast<float>(v));
  const std::vector<float> x = in[0].to_vector();
  std::vector<float> y(x.size(), 0.f);
  const std::int64_t C = shape[3];
  for (std::int64_t n = 0; n < shape[0]; ++n)
    for_each_tap(shape, n, transform_at(transforms, n), options_, [&](std::int64_t out, std::int64_t src, double w) {
      for (std::int64_t c = 0; c < C; ++c)
        y[static_cast<std::size_t>(out + c)] +=
            static_cast<float>(w * (src < 0 ? options_.fill_value : x[static_cast<std::size_t>(src + c)]));
    });
  st.saved.push_back(Tensor::from_vector({shape[0], 8}, transforms));  // the draws, on the host, for backward
  return {Tensor::from_vector(shape, y).to(in[0].device())};
}

std::vector<Tensor> RandomAffineLayer::backward(ReplicaContext&, const std::vector<Tensor>&, const std::vector<Tensor>&,
                                                const std::vector<Tensor>& grads, LayerState& st) {
  if (st.saved.empty()) return {grads[0]};
  const Shape& shape = grads[0].shape();
  const std::vector<float> transforms = st.saved[0].to_vector(), dy = grads[0].to_vector();
  std::vector<float> dx(dy.size(), 0.f);
  const std::int64_t C = shape[3];
  for (std::int64_t n = 0; n < shape[0]; ++n)
    for_each_tap(shape, n, transform_at(transforms, n), options_, [&](std::int64_t out, std::int64_t src, double w) {
      if (src < 0) return;  // the constant fill does not depend on the input
      for (std::int64_t c = 0; c < C; ++c)
        dx[static_cast<std::size_t>(src + c)] += static_cast<float>(w * dy[static_cast<std::size_t>(out + c)]);
    });
  return {Tensor::from_vector(shape, dx).to(grads[0].device())};
}

Json RandomAffineLayer::config_with(const Json& own) const {
  Json config = detail::Json({{"name", name()}, {"data_format", "channels_last"}});
  for (auto& [key, value] : own.items()) config[key] = value;
  config["fill_mode"] = options_.fill_mode;
  config["fill_value"] = detail::json_float(options_.fill_value);
  config["interpolation"] = options_.interpolation;
  config["seed"] = options_.seed ? Json(*options_.seed) : Json(nullptr);
  return config;
}

}  // namespace kerascpp::layers
