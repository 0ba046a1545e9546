// global_pooling: run_layer_test for GlobalMax/GlobalAveragePooling1D and 3D (2D: their own
// files), keepdims, and the 3-D outputs against a loop in double.
#include <algorithm>
#include <cmath>
#include <limits>

#include "expect_layer_passes.hpp"
#include "layer_on_cpu.hpp"

TEST_CASE("layer test: GlobalAveragePooling1D") {
  expect_layer_passes({.make = [] { return K::LayerRef(K::layers::GlobalAveragePooling1D()); },
                       .input_shapes = {{4, 3}},
                       .expected_output_shape = K::Shape{3},
                       .expected_trainable_weights = 0,
                       .expected_non_trainable_weights = 0});
}

TEST_CASE("layer test: GlobalMaxPooling1D keepdims") {
  expect_layer_passes({.make = [] { return K::LayerRef(K::layers::GlobalMaxPool1D({.keepdims = true})); },
                       .input_shapes = {{4, 3}},
                       .expected_output_shape = K::Shape{1, 3},
                       .expected_trainable_weights = 0,
                       .expected_non_trainable_weights = 0});
}

TEST_CASE("layer test: GlobalAveragePooling3D") {
  expect_layer_passes({.make = [] { return K::LayerRef(K::layers::GlobalAveragePooling3D()); },
                       .input_shapes = {{2, 3, 2, 2}},
                       .expected_output_shape = K::Shape{2},
                       .expected_trainable_weights = 0,
                       .expected_non_trainable_weights = 0});
}

TEST_CASE("layer test: GlobalMaxPooling3D") {
  expect_layer_passes({.make = [] { return K::LayerRef(K::layers::GlobalMaxPooling3D()); },
                       .input_shapes = {{2, 2, 3, 2}},
                       .expected_output_shape = K::Shape{2},
                       .expected_trainable_weights = 0,
                       .expected_non_trainable_weights = 0});
}

TEST_CASE("GlobalMaxPooling3D and GlobalAveragePooling3D(keepdims): each channel's max and mean") {
  using namespace layer_on_cpu;
  Replica rep;
  const K::Tensor x = tensor_of({2, 3, 2, 4, 3}, [](std::int64_t i) { return std::sin(1.3f * static_cast<float>(i)); });
  K::LayerState st_max, st_mean;
  const auto ymax = forward(rep, K::layers::GlobalMaxPooling3D(), {x}, st_max).at(0);
  const auto ymean = forward(rep, K::layers::GlobalAveragePooling3D({.keepdims = true}), {x}, st_mean).at(0);
  REQUIRE(ymax.shape() == K::Shape{2, 3});
  REQUIRE(ymean.shape() == K::Shape{2, 1, 1, 1, 3});
  const auto xv = x.to_vector(), maxv = ymax.to_vector(), meanv = ymean.to_vector();
  for (std::int64_t b = 0; b < 2; ++b)
    for (std::int64_t c = 0; c < 3; ++c) {
      double best = -std::numeric_limits<double>::infinity(), sum = 0;
      for (std::int64_t p = 0; p < 24; ++p) {
        const double v = xv[static_cast<std::size_t>((b * 24 + p) * 3 + c)];
        best = std::max(best, v);
        sum += v;
      }
      CHECK(maxv[static_cast<std::size_t>(b * 3 + c)] == best);
      CHECK(meanv[static_cast<std::size_t>(b * 3 + c)] == doctest::Approx(sum / 24).epsilon(1e-6));
    }
}

TEST_CASE("GlobalAveragePooling1D with a mask: the mean and its gradient over the unmasked steps only") {
  using namespace layer_on_cpu;
  Replica rep(true);
  const K::Tensor x = tensor_of({2, 3, 2}, [](std::int64_t i) { return 0.5f * static_cast<float>(i) - 2.f; });
  K::Tensor mask({2, 3}, K::DType::uint8, K::Device{});
  const std::uint8_t keep[6] = {1, 0, 1, 0, 0, 0};  // example 1 wholly masked: zeros (Keras: 0/0)
  std::copy(keep, keep + 6, static_cast<std::uint8_t*>(mask.raw()));
  K::LayerRef layer = K::layers::GlobalAveragePooling1D();
  K::LayerState st;
  (void)layer(K::Input({3, 2}));
  st.input_masks = {mask};
  const K::Tensor y = layer->forward(rep.ctx, {x}, st).at(0);
  const K::Tensor dy = tensor_of({2, 2}, [](std::int64_t i) { return 1.f + static_cast<float>(i); });
  const auto dx = layer->backward(rep.ctx, {x}, {y}, {dy}, st).at(0).to_vector();
  const auto xv = x.to_vector(), yv = y.to_vector();
  for (std::int64_t c = 0; c < 2; ++c) {
    CHECK(yv[static_cast<std::size_t>(c)] == doctest::Approx((xv[static_cast<std::size_t>(c)] + xv[4 + c]) / 2.0));
    CHECK(yv[static_cast<std::size_t>(2 + c)] == 0.f);
    for (std::int64_t t = 0; t < 3; ++t) {
      CHECK(dx[static_cast<std::size_t>(t * 2 + c)] == doctest::Approx(keep[t] ? (1.0 + c) / 2 : 0.0));
      CHECK(dx[static_cast<std::size_t>(6 + t * 2 + c)] == 0.f);
    }
  }
}
