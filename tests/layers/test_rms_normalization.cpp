// rms_normalization: run_layer_test, and the output against x / √(mean(x²) + ε) · scale in double.
#include <cmath>

#include "expect_layer_passes.hpp"
#include "layer_on_cpu.hpp"

TEST_CASE("layer test: RMSNormalization") {
  expect_layer_passes({.make = [] { return K::LayerRef(K::layers::RMSNormalization({.epsilon = 1e-3f})); },
                       .input_shapes = {{2, 4}},
                       .expected_output_shape = K::Shape{2, 4},
                       .expected_trainable_weights = 1,
                       .expected_non_trainable_weights = 0});
}

TEST_CASE("RMSNormalization: each row over its root mean square (plus epsilon), times the scale") {
  using namespace layer_on_cpu;
  Replica rep;
  const float eps = 0.01f;
  const K::Tensor x = tensor_of({3, 4}, [](std::int64_t i) { return std::sin(0.8f * static_cast<float>(i)) * 0.3f; });
  K::LayerRef layer = K::layers::RMSNormalization({.epsilon = eps});
  (void)layer(K::Input({4}));
  const K::Tensor scale = tensor_of({4}, [](std::int64_t i) { return 0.5f + static_cast<float>(i); });
  layer->variables().at(0)->value(0).copy_from(scale);
  K::LayerState st;
  const auto yv = layer->forward(rep.ctx, {x}, st).at(0).to_vector();
  const auto xv = x.to_vector(), sv = scale.to_vector();
  for (std::size_t r = 0; r < 3; ++r) {
    double squares = 0;
    for (std::size_t k = 0; k < 4; ++k) squares += double(xv[r * 4 + k]) * xv[r * 4 + k];
    const double rms = std::sqrt(squares / 4 + eps);
    for (std::size_t k = 0; k < 4; ++k)
      CHECK(yv[r * 4 + k] == doctest::Approx(xv[r * 4 + k] / rms * sv[k]).epsilon(1e-6));
  }
}
