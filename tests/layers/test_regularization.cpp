// regularization: run_layer_test for GaussianNoise, GaussianDropout, AlphaDropout and
// SpatialDropout1D/2D/3D (inference, where they are the identity), and in training: the noise's
// statistics against the formulas, whole channels dropped together, and the gradient.
#include <cmath>

#include "expect_layer_passes.hpp"
#include "layer_on_cpu.hpp"

namespace {
void expect_identity_layer_passes(const std::function<K::LayerRef()>& make, const K::Shape& shape) {
  expect_layer_passes({.make = make,
                       .input_shapes = {shape},
                       .expected_output_shape = shape,
                       .expected_trainable_weights = 0,
                       .expected_non_trainable_weights = 0,
                       .gradient_options = {.training = false}});
}

struct Moments {
  double mean, var;
};
Moments moments(const std::vector<float>& v) {
  double sum = 0, squares = 0;
  for (float x : v) sum += x;
  const double mean = sum / static_cast<double>(v.size());
  for (float x : v) squares += (x - mean) * (x - mean);
  return {mean, squares / static_cast<double>(v.size())};
}

// y − offset over 4096 training draws.
std::vector<float> training_output(const K::LayerRef& layer, const K::Tensor& x, float offset = 0.f) {
  layer_on_cpu::Replica rep(true);
  K::LayerState st;
  auto y = layer_on_cpu::forward(rep, layer, {x}, st).at(0).to_vector();
  for (float& v : y) v -= offset;
  return y;
}
}  // namespace

TEST_CASE("layer test: GaussianNoise, GaussianDropout, AlphaDropout, SpatialDropout1D/2D/3D (inference)") {
  expect_identity_layer_passes([] { return K::layers::GaussianNoise(0.3f, {.seed = 1}); }, {4});
  expect_identity_layer_passes([] { return K::layers::GaussianDropout(0.2f); }, {4});
  expect_identity_layer_passes([] { return K::layers::AlphaDropout(0.1f, {.seed = 2}); }, {4});
  expect_identity_layer_passes([] { return K::layers::SpatialDropout1D(0.2f); }, {3, 2});
  expect_identity_layer_passes([] { return K::layers::SpatialDropout2D(0.2f); }, {2, 2, 2});
  expect_identity_layer_passes([] { return K::layers::SpatialDropout3D(0.2f); }, {2, 1, 2, 2});
}

TEST_CASE("GaussianNoise and GaussianDropout in training: the noise's mean and variance") {
  using layer_on_cpu::tensor_of;
  const K::Tensor zeros = tensor_of({64, 64}, [](std::int64_t) { return 0.f; });
  const K::Tensor ones = tensor_of({64, 64}, [](std::int64_t) { return 1.f; });
  const Moments noise = moments(training_output(K::layers::GaussianNoise(0.5f, {.seed = 5}), zeros));
  CHECK(std::fabs(noise.mean) < 0.03);
  CHECK(noise.var == doctest::Approx(0.25).epsilon(0.08));
  const Moments factor = moments(training_output(K::layers::GaussianDropout(0.2f, {.seed = 6}), ones));
  CHECK(factor.mean == doctest::Approx(1.0).epsilon(0.03));
  CHECK(factor.var == doctest::Approx(0.2 / 0.8).epsilon(0.08));
}

TEST_CASE("AlphaDropout in training: kept a·x + b or dropped to a·alpha_p + b, mean 0 and variance 1 kept") {
  const double rate = 0.2, alpha_p = -1.6732632423543772848170429916717 * 1.0507009873554804934193349852946;
  const double a = 1 / std::sqrt((1 - rate) * (1 + rate * alpha_p * alpha_p)), b = -a * alpha_p * rate;
  K::Rng rng(11);
  const K::Tensor x = layer_on_cpu::tensor_of({64, 64}, [&](std::int64_t) { return static_cast<float>(rng.normal()); });
  const auto y = training_output(K::layers::AlphaDropout(0.2f, {.seed = 7}), x);
  const auto xv = x.to_vector();
  int dropped = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    const bool kept = std::fabs(y[i] - (a * xv[i] + b)) < 1e-5;
    const bool drop = std::fabs(y[i] - (a * alpha_p + b)) < 1e-5;
    CHECK((kept || drop));
    dropped += drop && !kept;
  }
  CHECK(dropped / 4096.0 == doctest::Approx(rate).epsilon(0.12));
  const Moments m = moments(y);
  CHECK(std::fabs(m.mean) < 0.06);
  CHECK(m.var == doctest::Approx(1.0).epsilon(0.08));
}

TEST_CASE("SpatialDropout2D in training: each (example, channel) map kept whole (scaled) or dropped whole") {
  const K::Tensor ones = layer_on_cpu::tensor_of({8, 3, 3, 16}, [](std::int64_t) { return 1.f; });
  const auto y = training_output(K::layers::SpatialDropout2D(0.5f, {.seed = 9}), ones);
  int dropped = 0;
  for (std::int64_t b = 0; b < 8; ++b)
    for (std::int64_t c = 0; c < 16; ++c) {
      const float first = y[static_cast<std::size_t>(b * 144 + c)];
      CHECK((first == 0.f || first == 2.f));
      dropped += first == 0.f;
      for (std::int64_t p = 1; p < 9; ++p) CHECK(y[static_cast<std::size_t>((b * 9 + p) * 16 + c)] == first);
    }
  CHECK(dropped > 32);  // of 128 maps at rate 0.5: 64 expected, fewer than 33 has probability < 1e-8
  CHECK(dropped < 96);
}

TEST_CASE("noise layers in training: the gradient is the slope of y in x for the step's draws") {
  using namespace layer_on_cpu;
  const K::Tensor x = tensor_of({4, 3, 5}, [](std::int64_t i) { return 0.1f * static_cast<float>(i) + 0.05f; });
  const K::Tensor x2 =
      tensor_of({4, 3, 5}, [](std::int64_t i) { return 2.f * (0.1f * static_cast<float>(i) + 0.05f); });
  const K::Tensor dy = tensor_of({4, 3, 5}, [](std::int64_t) { return 1.f; });
  for (auto make : {+[] { return K::layers::GaussianNoise(0.4f); }, +[] { return K::layers::GaussianDropout(0.3f); },
                    +[] { return K::layers::AlphaDropout(0.3f); }, +[] { return K::layers::SpatialDropout1D(0.4f); }}) {
    K::LayerRef layer = make();
    CAPTURE(layer->class_name());
    Replica rep(true);
    K::LayerState st, st2;
    const std::uint64_t state = rep.ctx.rng.state();
    const auto y = forward(rep, layer, {x}, st).at(0).to_vector();
    const auto dx = layer->backward(rep.ctx, {x}, {}, {dy}, st).at(0).to_vector();
    rep.ctx.rng.set_state(state);  // the same draws for 2x: y is affine in x for fixed draws
    const auto y2 = forward(rep, layer, {x2}, st2).at(0).to_vector();
    const auto xv = x.to_vector();
    for (std::size_t i = 0; i < y.size(); ++i) CHECK(dx[i] == doctest::Approx((y2[i] - y[i]) / xv[i]).epsilon(1e-4));
  }
}
