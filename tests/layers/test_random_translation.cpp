// random_translation: run_layer_test (inference for the gradient check: training draws anew each
// call); a shift of a whole pixel under each fill mode against the formula; a fractional shift's
// backward is the adjoint of its forward (<y, dy> = <x, dx> in float64); seeds replay; bad
// settings are refused.
#include "expect_layer_passes.hpp"
#include "kerascpp/layers/random_translation.hpp"
#include "layer_on_cpu.hpp"

#include <string>
#include <vector>

TEST_CASE("layer test: RandomTranslation") {
  expect_layer_passes({.make = [] { return K::layers::RandomTranslation(0.2, 0.3, {.seed = 5}); },
                       .input_shapes = {{4, 5, 2}},
                       .expected_output_shape = K::Shape{4, 5, 2},
                       .expected_trainable_weights = 0,
                       .expected_non_trainable_weights = 0,
                       .gradient_options = {.training = false}});
}

namespace {

using namespace layer_on_cpu;

// Row h of a (1, H, 1, 1) column after a shift down by one pixel under `mode`.
float shifted(const std::vector<float>& column, std::int64_t h, const std::string& mode, float fill) {
  const auto H = static_cast<std::int64_t>(column.size());
  const std::int64_t src = h - 1;
  if (src >= 0) return column[static_cast<std::size_t>(src)];
  if (mode == "constant") return fill;
  if (mode == "wrap") return column[static_cast<std::size_t>(H - 1)];
  return column[0];  // reflect (d c b a | a b c d) and nearest both read row 0 at row -1
}

double dot(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += static_cast<double>(a[i]) * b[i];
  return s;
}

}  // namespace

TEST_CASE("RandomTranslation: whole-pixel shifts under each fill mode, the adjoint backward, replay") {
  const K::Tensor column = tensor_of({1, 4, 1, 1}, [](std::int64_t i) { return static_cast<float>(i * i + 1); });
  const auto cv = column.to_vector();
  for (const std::string mode : {"reflect", "wrap", "constant", "nearest"}) {
    CAPTURE(mode);
    Replica rep(true);
    K::LayerState st;
    // height_factor (0.25, 0.25) of 4 rows: exactly one pixel down.
    auto layer =
        K::layers::RandomTranslation(K::layers::AffineFactor::pair(0.25, 0.25), K::layers::AffineFactor::pair(0, 0),
                                     {.fill_mode = mode, .fill_value = -3.f, .seed = 1});
    const auto y = forward(rep, layer, {column}, st).at(0).to_vector();
    for (std::int64_t h = 0; h < 4; ++h)
      CHECK(y[static_cast<std::size_t>(h)] == doctest::Approx(shifted(cv, h, mode, -3.f)));
  }
  // A fractional shift in both axes: the backward is the forward's adjoint.
  const K::Tensor x = tensor_of({2, 5, 4, 3}, [](std::int64_t i) { return static_cast<float>((i * 37) % 11) - 5.f; });
  const K::Tensor dy = tensor_of({2, 5, 4, 3}, [](std::int64_t i) { return static_cast<float>((i * 13) % 7) - 3.f; });
  for (const std::string mode : {"reflect", "wrap", "constant", "nearest"}) {
    CAPTURE(mode);
    Replica rep(true);
    rep.ctx.rng = K::Rng(3);
    K::LayerState st;
    auto layer = K::layers::RandomTranslation(0.4, 0.3, {.fill_mode = mode, .seed = 2});
    const K::Tensor y = forward(rep, layer, {x}, st).at(0);
    const K::Tensor dx = layer->backward(rep.ctx, {x}, {y}, {dy}, st).at(0);
    CHECK(dot(y.to_vector(), dy.to_vector()) == doctest::Approx(dot(x.to_vector(), dx.to_vector())).epsilon(1e-4));
    Replica again(true);
    again.ctx.rng = K::Rng(3);
    K::LayerState st2;
    CHECK(forward(again, K::layers::RandomTranslation(0.4, 0.3, {.fill_mode = mode, .seed = 2}), {x}, st2)
              .at(0)
              .to_vector() == y.to_vector());
  }
  Replica inference(false);
  K::LayerState st;
  CHECK(forward(inference, K::layers::RandomTranslation(0.5, 0.5), {x}, st).at(0).to_vector() == x.to_vector());
  CHECK_THROWS_AS(K::layers::RandomTranslation(1.5, 0.1), K::ValueError);
  CHECK_THROWS_AS(K::layers::RandomTranslation(0.1, 0.1, {.fill_mode = "mirror"}), K::ValueError);
  CHECK_THROWS_AS(K::layers::RandomTranslation(0.1, 0.1, {.interpolation = "bicubic"}), K::ValueError);
}
