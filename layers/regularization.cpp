// GaussianNoise, GaussianDropout, AlphaDropout and SpatialDropout1D/2D/3D from the Backend's
// random_normal and dropout_forward draws, seeded per step and replica as Dropout is.
#include "kerascpp/layers/regularization.hpp"
#include "kerascpp/core/layer_config.hpp"

#include <cmath>

#include "axis_blocks.hpp"
#include "check.hpp"
#include "kerascpp/core/random.hpp"
#include "layer_util.hpp"

namespace kerascpp::layers {

namespace {
// SELU's constants (AlphaDropout drops to SELU's negative saturation −alpha·scale).
constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
constexpr double kSeluScale = 1.0507009873554804934193349852946;

// x + value in place, x viewed as one column over a one-element "bias" (Backend::bias_add).
void add_scalar(Backend& be, Tensor& x, float value) {
  Tensor b = Tensor::zeros({1}, DType::float32, x.device());
  b.fill(value);
  Tensor column = x.reshape({-1, 1});
  be.bias_add(column, b);
}
}  // namespace

NoiseLayer::NoiseLayer(NoiseKind kind, float amount, int spatial_rank, DropoutOptions options)
    : Layer(std::move(options.name)),
      kind_(kind),
      amount_(amount),
      spatial_rank_(spatial_rank),
      config_seed_(options.seed),
      seed_(options.seed ? *options.seed : next_random_seed()) {
  if (kind_ == NoiseKind::gaussian_noise)
    KERASCPP_CHECK_VALUE(amount_ >= 0.f && std::isfinite(amount_),
                         "GaussianNoise '{}': stddev must be a finite number >= 0, got {}", name(), amount_);
  else
    KERASCPP_CHECK_VALUE(amount_ >= 0.f && amount_ < 1.f,
                         "{} '{}': rate must be in [0, 1) (the fraction of inputs dropped), got {}", class_name(),
                         name(), amount_);
  if (kind_ == NoiseKind::spatial_dropout) {
    KERASCPP_CHECK_VALUE(spatial_rank_ >= 1 && spatial_rank_ <= 3, "SpatialDropout '{}': 1 to 3 spatial axes, got {}",
                         name(), spatial_rank_);
    set_input_spec(detail::spatial_spec(static_cast<std::size_t>(spatial_rank_)));
  } else {
    set_input_spec({});  // one float32 input of any shape
  }
}

std::string NoiseLayer::class_name() const {
  switch (kind_) {
    case NoiseKind::gaussian_noise:
      return "GaussianNoise";
    case NoiseKind::gaussian_dropout:
      return "GaussianDropout";
    case NoiseKind::alpha_dropout:
      return "AlphaDropout";
    case NoiseKind::spatial_dropout:
      break;
  }
  return "SpatialDropout" + std::to_string(spatial_rank_) + "D";
}

// The per-element factor dL/dx = factor · dL/dy of the multiplicative kinds, drawn for this step.
Tensor NoiseLayer::draw_factors(Backend& be, const Tensor& x, std::uint64_t seed) const {
  if (kind_ == NoiseKind::gaussian_dropout) {
    Tensor f(x.shape());
    be.random_normal(seed, 1.f, std::sqrt(amount_ / (1.f - amount_)), f);
    return f;
  }
  // SpatialDropout: one inverted-dropout draw per (example, channel), repeated over the spatial axes.
  Shape small(x.shape().size(), 1);
  small.front() = x.dim(0);
  small.back() = x.dim(-1);
  Tensor unused, mask;
  be.dropout_forward(Tensor::zeros(small), amount_, seed, unused, mask);
  for (int axis = 1; axis < x.rank() - 1; ++axis) mask = detail::repeat_axis(be, mask, axis, x.dim(axis));
  return mask;
}

// st.saved[0]: the factor the backward multiplies by (none for GaussianNoise, whose gradient is dy).
std::vector<Tensor> NoiseLayer::forward(ReplicaContext& ctx, const std::vector<Tensor>& in, LayerState& st) {
  st.saved.clear();
  if (!ctx.training || amount_ == 0.f) return {in[0]};
  Backend& be = *ctx.backend;
  const Tensor& x = in[0];
  // The replica's stream advances every step, so draws differ per step and replica yet replay exactly.
  const std::uint64_t seed = seed_ ^ ctx.rng.next_u64();
  Tensor y(x.shape());
  switch (kind_) {
    case NoiseKind::gaussian_noise:
      be.random_normal(seed, 0.f, amount_, y);
      be.add_inplace(y, x);
      return {y};
    case NoiseKind::alpha_dropout: {
      // Keras: y = a·(x·keep + alpha_p·(1 − keep)) + b = keep·a·(x − alpha_p) + a·alpha_p + b. The
      // dropout op's mask is keep/(1 − rate), so the kept part is mask·(1 − rate)·a·(x − alpha_p).
      const double rate = amount_, alpha_p = -kSeluAlpha * kSeluScale;
      const double a = 1.0 / std::sqrt((1 - rate) * (1 + rate * alpha_p * alpha_p));
      const double b = -a * alpha_p * rate;
      const auto kept_gain = static_cast<float>((1 - rate) * a);
      Tensor shifted = x.clone();
      add_scalar(be, shifted, static_cast<float>(-alpha_p));
      be.scale(shifted, kept_gain);
      Tensor mask;
      be.dropout_forward(shifted, amount_, seed, y, mask);
      add_scalar(be, y, static_cast<float>(a * alpha_p + b));
      be.scale(mask, kept_gain);  // dy/dx
      st.saved = {mask};
      return {y};
    }
    case NoiseKind::gaussian_dropout:
    case NoiseKind::spatial_dropout:
      break;
  }
  Tensor factors = draw_factors(be, x, seed);
  be.multiply(x, factors, y);
  st.saved = {factors};
  return {y};
}

std::vector<Tensor> NoiseLayer::backward(ReplicaContext& ctx, const std::vector<Tensor>&, const std::vector<Tensor>&,
                                         const std::vector<Tensor>& grads, LayerState& st) {
  if (st.saved.empty()) return {grads[0]};
  Tensor dx(grads[0].shape());
  ctx.backend->multiply(grads[0], st.saved[0], dx);
  return {dx};
}

Json NoiseLayer::get_config() const {
  const Json seed = config_seed_ ? Json(*config_seed_) : Json(nullptr);
  const double amount = detail::json_float(amount_);
  switch (kind_) {
    case NoiseKind::gaussian_noise:
      return detail::Json({{"name", name()}, {"stddev", amount}, {"seed", seed}});
    case NoiseKind::gaussian_dropout:
      return detail::Json({{"name", name()}, {"rate", amount}, {"seed", seed}});
    case NoiseKind::alpha_dropout:
      return detail::Json({{"name", name()}, {"rate", amount}, {"seed", seed}, {"noise_shape", nullptr}});
    case NoiseKind::spatial_dropout:
      break;
  }
  detail::Json config({{"rate", amount}, {"seed", seed}, {"name", name()}});
  if (spatial_rank_ > 1) config["data_format"] = "channels_last";  // Keras' SpatialDropout2D/3D
  return config;
}

LayerRef GaussianNoise(float stddev, DropoutOptions options) {
  return std::make_shared<NoiseLayer>(NoiseKind::gaussian_noise, stddev, 0, std::move(options));
}
LayerRef GaussianDropout(float rate, DropoutOptions options) {
  return std::make_shared<NoiseLayer>(NoiseKind::gaussian_dropout, rate, 0, std::move(options));
}
LayerRef AlphaDropout(float rate, DropoutOptions options) {
  return std::make_shared<NoiseLayer>(NoiseKind::alpha_dropout, rate, 0, std::move(options));
}
LayerRef SpatialDropout1D(float rate, DropoutOptions options) {
  return std::make_shared<NoiseLayer>(NoiseKind::spatial_dropout, rate, 1, std::move(options));
}
LayerRef SpatialDropout2D(float rate, DropoutOptions options) {
  return std::make_shared<NoiseLayer>(NoiseKind::spatial_dropout, rate, 2, std::move(options));
}
LayerRef SpatialDropout3D(float rate, DropoutOptions options) {
  return std::make_shared<NoiseLayer>(NoiseKind::spatial_dropout, rate, 3, std::move(options));
}

namespace {
template <NoiseKind Kind, int Rank>
LayerRef noise_from_config(const LayerConfig& c) {
  if (Kind == NoiseKind::alpha_dropout) c.expect("noise_shape", nullptr, "one draw per input element");
  if (Kind == NoiseKind::spatial_dropout && Rank > 1) c.expect_channels_last();
  DropoutOptions o{.name = c.name()};
  if (c.find("seed")) o.seed = c.get<std::uint64_t>("seed", 0);
  const float amount = c.required<float>(Kind == NoiseKind::gaussian_noise ? "stddev" : "rate");
  return std::make_shared<NoiseLayer>(Kind, amount, Rank, o);
}
}  // namespace

KERASCPP_REGISTER_LAYER("GaussianNoise", (noise_from_config<NoiseKind::gaussian_noise, 0>));
KERASCPP_REGISTER_LAYER("GaussianDropout", (noise_from_config<NoiseKind::gaussian_dropout, 0>));
KERASCPP_REGISTER_LAYER("AlphaDropout", (noise_from_config<NoiseKind::alpha_dropout, 0>));
KERASCPP_REGISTER_LAYER("SpatialDropout1D", (noise_from_config<NoiseKind::spatial_dropout, 1>));
KERASCPP_REGISTER_LAYER("SpatialDropout2D", (noise_from_config<NoiseKind::spatial_dropout, 2>));
KERASCPP_REGISTER_LAYER("SpatialDropout3D", (noise_from_config<NoiseKind::spatial_dropout, 3>));

}  // namespace kerascpp::layers
