// zero_padding: run_layer_test for ZeroPadding1D and ZeroPadding3D (ZeroPadding2D: test_zero_padding2d.cpp),
// and a 3-D padding against the layout written out.
#include "expect_layer_passes.hpp"
#include "layer_on_cpu.hpp"

TEST_CASE("layer test: ZeroPadding1D") {
  expect_layer_passes({.make = [] { return K::LayerRef(K::layers::ZeroPadding1D({2, 1})); },
                       .input_shapes = {{3, 2}},
                       .expected_output_shape = K::Shape{6, 2},
                       .expected_trainable_weights = 0,
                       .expected_non_trainable_weights = 0});
}

TEST_CASE("layer test: ZeroPadding3D") {
  expect_layer_passes({.make = [] { return K::LayerRef(K::layers::ZeroPadding3D({1, {0, 2}, 1})); },
                       .input_shapes = {{2, 2, 2, 1}},
                       .expected_output_shape = K::Shape{4, 4, 4, 1},
                       .expected_trainable_weights = 0,
                       .expected_non_trainable_weights = 0});
}

TEST_CASE("ZeroPadding3D: the input inside, zeros around it") {
  using namespace layer_on_cpu;
  Replica rep;
  const K::Tensor x = tensor_of({1, 2, 2, 3, 2}, [](std::int64_t i) { return 1.f + static_cast<float>(i); });
  K::LayerState st;
  const K::Tensor y = forward(rep, K::layers::ZeroPadding3D({{1, 0}, {0, 2}, {1, 1}}), {x}, st).at(0);
  REQUIRE(y.shape() == K::Shape{1, 3, 4, 5, 2});
  const auto xv = x.to_vector(), yv = y.to_vector();
  for (std::int64_t d = 0; d < 3; ++d)
    for (std::int64_t h = 0; h < 4; ++h)
      for (std::int64_t w = 0; w < 5; ++w)
        for (std::int64_t c = 0; c < 2; ++c) {
          const bool inside = d >= 1 && h < 2 && w >= 1 && w < 4;
          const float want = inside ? xv[static_cast<std::size_t>(offset(x.shape(), {0, d - 1, h, w - 1, c}))] : 0.f;
          CHECK(yv[static_cast<std::size_t>(offset(y.shape(), {0, d, h, w, c}))] == want);
        }
}
