// repeat_vector: run_layer_test, and the output against the copies written out.
#include "expect_layer_passes.hpp"
#include "layer_on_cpu.hpp"

TEST_CASE("layer test: RepeatVector") {
  expect_layer_passes({.make = [] { return K::LayerRef(K::layers::RepeatVector(3)); },
                       .input_shapes = {{4}},
                       .expected_output_shape = K::Shape{3, 4},
                       .expected_trainable_weights = 0,
                       .expected_non_trainable_weights = 0});
}

TEST_CASE("RepeatVector: each step is the input vector") {
  using namespace layer_on_cpu;
  Replica rep;
  const K::Tensor x = tensor_of({2, 3}, [](std::int64_t i) { return 0.5f * static_cast<float>(i) - 1.f; });
  K::LayerState st;
  const K::Tensor y = forward(rep, K::layers::RepeatVector(4), {x}, st).at(0);
  REQUIRE(y.shape() == K::Shape{2, 4, 3});
  const auto xv = x.to_vector(), yv = y.to_vector();
  for (std::int64_t b = 0; b < 2; ++b)
    for (std::int64_t t = 0; t < 4; ++t)
      for (std::int64_t d = 0; d < 3; ++d)
        CHECK(yv[static_cast<std::size_t>((b * 4 + t) * 3 + d)] == xv[static_cast<std::size_t>(b * 3 + d)]);
  CHECK_THROWS_AS(K::layers::RepeatVector(0), K::ValueError);
}
