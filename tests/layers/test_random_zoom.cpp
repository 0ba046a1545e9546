// random_zoom: run_layer_test (inference for the gradient check); a zoom of exactly 2 (nearest,
// constant fill) reads the input columns Keras' zoom matrix names; without a width_factor the
// width takes the height draw; identity in inference; bad settings are refused.
#include "expect_layer_passes.hpp"
#include "kerascpp/layers/random_zoom.hpp"
#include "layer_on_cpu.hpp"

TEST_CASE("layer test: RandomZoom") {
  expect_layer_passes({.make = [] { return K::layers::RandomZoom(0.2, 0.3, {.seed = 5}); },
                       .input_shapes = {{4, 5, 2}},
                       .expected_output_shape = K::Shape{4, 5, 2},
                       .expected_trainable_weights = 0,
                       .expected_non_trainable_weights = 0,
                       .gradient_options = {.training = false}});
}

TEST_CASE("RandomZoom: Keras' zoom matrix about the centre") {
  using namespace layer_on_cpu;
  // A 1 x 5 row zoomed by zx = 2 (width_factor (1, 1)), height untouched (height_factor (0, 0)):
  // output column x reads input column 2x + (5 - 1) / 2 (1 - 2) = 2x - 2.
  const K::Tensor row = tensor_of({1, 1, 5, 1}, [](std::int64_t i) { return static_cast<float>(10 + i); });
  Replica rep(true);
  K::LayerState st;
  auto layer = K::layers::RandomZoom(K::layers::AffineFactor::pair(0, 0), K::layers::AffineFactor::pair(1, 1),
                                     {.fill_mode = "constant", .interpolation = "nearest", .fill_value = -1.f});
  const auto y = forward(rep, layer, {row}, st).at(0).to_vector();
  CHECK(y == std::vector<float>{-1.f, 10.f, 12.f, 14.f, -1.f});
  // Without a width_factor both axes take the height draw: a 3 x 3 image zoomed by 2 in both.
  const K::Tensor sq = tensor_of({1, 3, 3, 1}, [](std::int64_t i) { return static_cast<float>(i); });
  K::LayerState st2;
  const auto z = forward(rep,
                         K::layers::RandomZoom(K::layers::AffineFactor::pair(1, 1), std::nullopt,
                                               {.fill_mode = "constant", .interpolation = "nearest"}),
                         {sq}, st2)
                     .at(0)
                     .to_vector();
  // Output (x, y) reads (2x - 1, 2y - 1): only the centre (1, 1) lies inside; 0 elsewhere.
  CHECK(z == std::vector<float>{0.f, 0.f, 0.f, 0.f, 4.f, 0.f, 0.f, 0.f, 0.f});
  Replica inference(false);
  K::LayerState st3;
  CHECK(forward(inference, K::layers::RandomZoom(0.3), {sq}, st3).at(0).to_vector() == sq.to_vector());
  CHECK_THROWS_AS(K::layers::RandomZoom(-1.0), K::ValueError);  // Keras: each end in (-1, 1]
  CHECK_THROWS_AS(K::layers::RandomZoom(0.1, 0.1, {.interpolation = "area"}), K::ValueError);
}
