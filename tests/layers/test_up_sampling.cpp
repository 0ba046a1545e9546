// up_sampling: run_layer_test for UpSampling1D and UpSampling3D (UpSampling2D: test_up_sampling2d.cpp),
// and the nearest copies against the indices written out.
#include "expect_layer_passes.hpp"
#include "layer_on_cpu.hpp"

TEST_CASE("layer test: UpSampling1D") {
  expect_layer_passes({.make = [] { return K::LayerRef(K::layers::UpSampling1D(3)); },
                       .input_shapes = {{2, 2}},
                       .expected_output_shape = K::Shape{6, 2},
                       .expected_trainable_weights = 0,
                       .expected_non_trainable_weights = 0});
}

TEST_CASE("layer test: UpSampling3D") {
  expect_layer_passes({.make = [] { return K::LayerRef(K::layers::UpSampling3D({1, 2, 2})); },
                       .input_shapes = {{2, 2, 1, 2}},
                       .expected_output_shape = K::Shape{2, 4, 2, 2},
                       .expected_trainable_weights = 0,
                       .expected_non_trainable_weights = 0});
}

TEST_CASE("UpSampling1D/3D: output element i is input element i / size on each axis") {
  using namespace layer_on_cpu;
  Replica rep;
  const K::Tensor x3 = tensor_of({1, 2, 3, 2, 2}, [](std::int64_t i) { return static_cast<float>(i); });
  K::LayerState st;
  const K::Tensor y3 = forward(rep, K::layers::UpSampling3D({2, 1, 3}), {x3}, st).at(0);
  REQUIRE(y3.shape() == K::Shape{1, 4, 3, 6, 2});
  const auto x3v = x3.to_vector(), y3v = y3.to_vector();
  for (std::int64_t d = 0; d < 4; ++d)
    for (std::int64_t h = 0; h < 3; ++h)
      for (std::int64_t w = 0; w < 6; ++w)
        for (std::int64_t c = 0; c < 2; ++c)
          CHECK(y3v[static_cast<std::size_t>(offset(y3.shape(), {0, d, h, w, c}))] ==
                x3v[static_cast<std::size_t>(offset(x3.shape(), {0, d / 2, h, w / 3, c}))]);
  const K::Tensor x1 = tensor_of({2, 3, 1}, [](std::int64_t i) { return static_cast<float>(i); });
  K::LayerState st1;
  const auto y1v = forward(rep, K::layers::UpSampling1D(2), {x1}, st1).at(0).to_vector();
  REQUIRE(y1v.size() == 12);
  for (std::size_t i = 0; i < 12; ++i) CHECK(y1v[i] == static_cast<float>((i / 6) * 3 + (i % 6) / 2));
  CHECK_THROWS_AS(K::layers::UpSampling3D(2, {.interpolation = "bilinear"}), K::ValueError);
}
