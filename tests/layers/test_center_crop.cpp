// center_crop: run_layer_test, the window against Keras' start ((H - h) // 2, (W - w) // 2), and
// the refusal of images smaller than the crop.
#include "expect_layer_passes.hpp"
#include "kerascpp/layers/center_crop.hpp"
#include "layer_on_cpu.hpp"

TEST_CASE("layer test: CenterCrop") {
  expect_layer_passes({.make = [] { return K::LayerRef(K::layers::CenterCrop(2, 3)); },
                       .input_shapes = {{5, 4, 2}},
                       .expected_output_shape = K::Shape{2, 3, 2},
                       .expected_trainable_weights = 0,
                       .expected_non_trainable_weights = 0});
}

TEST_CASE("CenterCrop: the central window, odd margins rounded down at the top and left") {
  using namespace layer_on_cpu;
  Replica rep;
  const K::Tensor x = tensor_of({2, 7, 6, 3}, [](std::int64_t i) { return static_cast<float>(i); });
  K::LayerState st;
  const K::Tensor y = forward(rep, K::layers::CenterCrop(4, 3), {x}, st).at(0);
  REQUIRE(y.shape() == K::Shape{2, 4, 3, 3});
  const std::int64_t top = (7 - 4) / 2, left = (6 - 3) / 2;  // Keras: h_diff // 2, w_diff // 2
  const auto xv = x.to_vector(), yv = y.to_vector();
  for (std::int64_t n = 0; n < 2; ++n)
    for (std::int64_t h = 0; h < 4; ++h)
      for (std::int64_t w = 0; w < 3; ++w)
        for (std::int64_t c = 0; c < 3; ++c)
          CHECK(yv[static_cast<std::size_t>(offset(y.shape(), {n, h, w, c}))] ==
                xv[static_cast<std::size_t>(offset(x.shape(), {n, h + top, w + left, c}))]);
  CHECK_THROWS_AS(K::layers::CenterCrop(8, 3)(K::Input({7, 6, 3})), K::ShapeError);
  CHECK_THROWS_AS(K::layers::CenterCrop(0, 3), K::ValueError);
}
