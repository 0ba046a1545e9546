// rescaling: run_layer_test, and the output against x * scale + offset written out.
#include "expect_layer_passes.hpp"
#include "kerascpp/layers/rescaling.hpp"
#include "layer_on_cpu.hpp"

#include <limits>

TEST_CASE("layer test: Rescaling") {
  expect_layer_passes({.make = [] { return K::LayerRef(K::layers::Rescaling(0.5f, {.offset = -0.25f})); },
                       .input_shapes = {{3, 2}},
                       .expected_output_shape = K::Shape{3, 2},
                       .expected_trainable_weights = 0,
                       .expected_non_trainable_weights = 0});
}

TEST_CASE("Rescaling: x * scale + offset in training and inference; bad arguments refused") {
  using namespace layer_on_cpu;
  const K::Tensor x = tensor_of({2, 2, 2, 3}, [](std::int64_t i) { return static_cast<float>(i * 11 % 256); });
  for (bool training : {false, true}) {
    Replica rep(training);
    K::LayerState st;
    const K::Tensor y = forward(rep, K::layers::Rescaling(1.f / 127.5f, {.offset = -1.f}), {x}, st).at(0);
    REQUIRE(y.shape() == x.shape());
    const auto xv = x.to_vector(), yv = y.to_vector();
    for (std::size_t i = 0; i < xv.size(); ++i)
      CHECK(yv[i] == doctest::Approx(static_cast<double>(xv[i]) / 127.5 - 1.0).epsilon(1e-6));
  }
  CHECK_THROWS_AS(K::layers::Rescaling(std::numeric_limits<float>::infinity()), K::ValueError);
}
