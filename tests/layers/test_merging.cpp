// merging: run_layer_test (shapes, weights, config and .keras round trips, gradients, CPU vs GPU).
#include "expect_layer_passes.hpp"
#include "layer_on_cpu.hpp"

#include <algorithm>

TEST_CASE("layer test: Add") {
  expect_layer_passes({.make = [] { return K::LayerRef(K::layers::Add()); },
                       .input_shapes = {{4}, {4}},
                       .expected_output_shape = K::Shape{4},
                       .expected_trainable_weights = 0,
                       .expected_non_trainable_weights = 0});
}

TEST_CASE("layer test: Subtract") {
  expect_layer_passes({.make = [] { return K::LayerRef(K::layers::Subtract()); },
                       .input_shapes = {{4}, {4}},
                       .expected_output_shape = K::Shape{4},
                       .expected_trainable_weights = 0,
                       .expected_non_trainable_weights = 0});
}

TEST_CASE("layer test: Multiply") {
  expect_layer_passes({.make = [] { return K::LayerRef(K::layers::Multiply()); },
                       .input_shapes = {{4}, {4}},
                       .expected_output_shape = K::Shape{4},
                       .expected_trainable_weights = 0,
                       .expected_non_trainable_weights = 0});
}

TEST_CASE("layer test: Average") {
  expect_layer_passes({.make = [] { return K::LayerRef(K::layers::Average()); },
                       .input_shapes = {{4}, {4}},
                       .expected_output_shape = K::Shape{4},
                       .expected_trainable_weights = 0,
                       .expected_non_trainable_weights = 0});
}

TEST_CASE("layer test: Concatenate") {
  expect_layer_passes({.make = [] { return K::LayerRef(K::layers::Concatenate(-1)); },
                       .input_shapes = {{2}, {3}},
                       .expected_output_shape = K::Shape{5},
                       .expected_trainable_weights = 0,
                       .expected_non_trainable_weights = 0});
}

TEST_CASE("layer test: Maximum") {
  expect_layer_passes({.make = [] { return K::LayerRef(K::layers::Maximum()); },
                       .input_shapes = {{2, 3}, {2, 3}, {2, 3}},
                       .expected_output_shape = K::Shape{2, 3},
                       .expected_trainable_weights = 0,
                       .expected_non_trainable_weights = 0});
}

TEST_CASE("layer test: Minimum") {
  expect_layer_passes({.make = [] { return K::LayerRef(K::layers::Minimum()); },
                       .input_shapes = {{4}, {4}},
                       .expected_output_shape = K::Shape{4},
                       .expected_trainable_weights = 0,
                       .expected_non_trainable_weights = 0});
}

TEST_CASE("Maximum and Minimum: elementwise over three inputs, the gradient to the extreme input") {
  using namespace layer_on_cpu;
  const K::Tensor a = tensor_of({2, 5}, [](std::int64_t i) { return static_cast<float>(i % 3) - 1.f; });
  const K::Tensor b = tensor_of({2, 5}, [](std::int64_t i) { return 0.7f * static_cast<float>(5 - i); });
  const K::Tensor c = tensor_of({2, 5}, [](std::int64_t i) { return i % 2 ? -3.f : 0.25f; });
  const K::Tensor dy = tensor_of({2, 5}, [](std::int64_t i) { return 1.f + static_cast<float>(i); });
  for (bool maximum : {true, false}) {
    CAPTURE(maximum);
    for (bool training : {true, false}) {  // a backward after an inference forward pools again
      Replica rep(training);
      K::LayerRef layer = maximum ? K::layers::Maximum() : K::layers::Minimum();
      K::LayerState st;
      const K::Tensor y = forward(rep, layer, {a, b, c}, st).at(0);
      const auto grads = layer->backward(rep.ctx, {a, b, c}, {y}, {dy}, st);
      const auto av = a.to_vector(), bv = b.to_vector(), cv = c.to_vector(), yv = y.to_vector(), g = dy.to_vector();
      for (std::size_t i = 0; i < yv.size(); ++i) {
        const float want = maximum ? std::max({av[i], bv[i], cv[i]}) : std::min({av[i], bv[i], cv[i]});
        CHECK(yv[i] == want);
        const std::size_t winner = av[i] == want ? 0 : bv[i] == want ? 1 : 2;  // no ties in these inputs
        for (std::size_t k = 0; k < 3; ++k) CHECK(grads[k].to_vector()[i] == (k == winner ? g[i] : 0.f));
      }
    }
  }
}
