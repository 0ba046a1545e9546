// random_rotation: run_layer_test (inference for the gradient check); a half turn maps pixel
// (h, w) to (H-1-h, W-1-w); a quarter turn of a square image moves every pixel as the rotation
// about the centre says; identity in inference; bad settings are refused.
#include "expect_layer_passes.hpp"
#include "kerascpp/layers/random_rotation.hpp"
#include "layer_on_cpu.hpp"

TEST_CASE("layer test: RandomRotation") {
  expect_layer_passes({.make = [] { return K::layers::RandomRotation(0.2, {.seed = 5}); },
                       .input_shapes = {{4, 5, 2}},
                       .expected_output_shape = K::Shape{4, 5, 2},
                       .expected_trainable_weights = 0,
                       .expected_non_trainable_weights = 0,
                       .gradient_options = {.training = false}});
}

TEST_CASE("RandomRotation: half and quarter turns about the centre") {
  using namespace layer_on_cpu;
  const std::int64_t H = 4, W = 5, C = 2;
  const K::Tensor x = tensor_of({1, H, W, C}, [](std::int64_t i) { return static_cast<float>(i % 9) * 0.5f - 1.f; });
  const auto xv = x.to_vector();
  Replica rep(true);
  K::LayerState st;
  const auto half =
      forward(rep, K::layers::RandomRotation(K::layers::AffineFactor::pair(0.5, 0.5), {.seed = 1}), {x}, st)
          .at(0)
          .to_vector();
  for (std::int64_t h = 0; h < H; ++h)
    for (std::int64_t w = 0; w < W; ++w)
      for (std::int64_t c = 0; c < C; ++c)
        CHECK(half[static_cast<std::size_t>(offset({1, H, W, C}, {0, h, w, c}))] ==
              doctest::Approx(xv[static_cast<std::size_t>(offset({1, H, W, C}, {0, H - 1 - h, W - 1 - w, c}))]));
  // A quarter turn (factor 0.25: 90 degrees) of a 3 x 3 image: output (x, y) reads the input at
  // (cx + (x - cx) cos - (y - cy) sin, cy + (x - cx) sin + (y - cy) cos) = (2 - y, x).
  const K::Tensor sq = tensor_of({1, 3, 3, 1}, [](std::int64_t i) { return static_cast<float>(i); });
  K::LayerState st2;
  const auto quarter =
      forward(rep, K::layers::RandomRotation(K::layers::AffineFactor::pair(0.25, 0.25), {.seed = 1}), {sq}, st2)
          .at(0)
          .to_vector();
  for (std::int64_t y = 0; y < 3; ++y)
    for (std::int64_t xx = 0; xx < 3; ++xx)
      CHECK(quarter[static_cast<std::size_t>(y * 3 + xx)] ==
            doctest::Approx(static_cast<float>(xx * 3 + (2 - y))).epsilon(1e-5));
  Replica inference(false);
  K::LayerState st3;
  CHECK(forward(inference, K::layers::RandomRotation(0.3), {x}, st3).at(0).to_vector() == xv);
  CHECK_THROWS_AS(K::layers::RandomRotation(1.2), K::ValueError);
  CHECK_THROWS_AS(K::layers::RandomRotation(0.1, {.fill_mode = "mirror"}), K::ValueError);
}
