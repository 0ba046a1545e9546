// permute: run_layer_test, and the output against the permutation written out.
#include "expect_layer_passes.hpp"
#include "layer_on_cpu.hpp"

TEST_CASE("layer test: Permute") {
  expect_layer_passes({.make = [] { return K::LayerRef(K::layers::Permute({3, 1, 2})); },
                       .input_shapes = {{2, 3, 4}},
                       .expected_output_shape = K::Shape{4, 2, 3},
                       .expected_trainable_weights = 0,
                       .expected_non_trainable_weights = 0});
}

TEST_CASE("Permute: output axis i is input axis dims[i]; a non-permutation is refused") {
  using namespace layer_on_cpu;
  Replica rep;
  const K::Tensor x = tensor_of({2, 2, 3, 4}, [](std::int64_t i) { return static_cast<float>(i); });
  K::LayerState st;
  const K::Tensor y = forward(rep, K::layers::Permute({3, 1, 2}), {x}, st).at(0);
  REQUIRE(y.shape() == K::Shape{2, 4, 2, 3});
  const auto xv = x.to_vector(), yv = y.to_vector();
  for (std::int64_t b = 0; b < 2; ++b)
    for (std::int64_t i = 0; i < 2; ++i)
      for (std::int64_t j = 0; j < 3; ++j)
        for (std::int64_t k = 0; k < 4; ++k)
          CHECK(yv[static_cast<std::size_t>(offset(y.shape(), {b, k, i, j}))] ==
                xv[static_cast<std::size_t>(offset(x.shape(), {b, i, j, k}))]);
  CHECK_THROWS_AS(K::layers::Permute({1, 1}), K::ValueError);
  CHECK_THROWS_AS(K::layers::Permute({0, 1}), K::ValueError);
}
