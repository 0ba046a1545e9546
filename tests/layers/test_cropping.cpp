// cropping: run_layer_test for Cropping1D/2D/3D, and a 3-D crop against the slice written out.
#include "expect_layer_passes.hpp"
#include "layer_on_cpu.hpp"

TEST_CASE("layer test: Cropping1D") {
  expect_layer_passes({.make = [] { return K::LayerRef(K::layers::Cropping1D({1, 2})); },
                       .input_shapes = {{5, 2}},
                       .expected_output_shape = K::Shape{2, 2},
                       .expected_trainable_weights = 0,
                       .expected_non_trainable_weights = 0});
}

TEST_CASE("layer test: Cropping2D") {
  expect_layer_passes({.make = [] { return K::LayerRef(K::layers::Cropping2D({1, 0, 2, 1})); },
                       .input_shapes = {{3, 5, 1}},
                       .expected_output_shape = K::Shape{2, 2, 1},
                       .expected_trainable_weights = 0,
                       .expected_non_trainable_weights = 0});
}

TEST_CASE("layer test: Cropping3D") {
  expect_layer_passes({.make = [] { return K::LayerRef(K::layers::Cropping3D({{1, 0}, {0, 1}, 1})); },
                       .input_shapes = {{3, 3, 4, 2}},
                       .expected_output_shape = K::Shape{2, 2, 2, 2},
                       .expected_trainable_weights = 0,
                       .expected_non_trainable_weights = 0});
}

TEST_CASE("Cropping3D: the kept block of the input; cropping everything is refused") {
  using namespace layer_on_cpu;
  Replica rep;
  const K::Tensor x = tensor_of({2, 4, 3, 5, 2}, [](std::int64_t i) { return static_cast<float>(i); });
  K::LayerState st;
  const K::Tensor y = forward(rep, K::layers::Cropping3D({{1, 2}, {0, 1}, {2, 0}}), {x}, st).at(0);
  REQUIRE(y.shape() == K::Shape{2, 1, 2, 3, 2});
  const auto xv = x.to_vector(), yv = y.to_vector();
  for (std::int64_t n = 0; n < 2; ++n)
    for (std::int64_t h = 0; h < 2; ++h)
      for (std::int64_t w = 0; w < 3; ++w)
        for (std::int64_t c = 0; c < 2; ++c)
          CHECK(yv[static_cast<std::size_t>(offset(y.shape(), {n, 0, h, w, c}))] ==
                xv[static_cast<std::size_t>(offset(x.shape(), {n, 1, h, w + 2, c}))]);
  CHECK_THROWS_AS(K::layers::Cropping1D(2)(K::Input({4, 1})), K::ShapeError);
  CHECK_THROWS_AS(K::layers::Cropping1D(-1), K::ValueError);
}
