// time_distributed: run_layer_test (shapes, weights, config and .keras round trips, gradients, CPU vs
// GPU), and TimeDistributed(Dense) equal to Dense on each step; Keras: the time_distributed kind of
// tests/python/test_transformer_layers_interop.py.
#include "expect_layer_passes.hpp"
#include "layer_on_cpu.hpp"

TEST_CASE("layer test: TimeDistributed(Dense) and TimeDistributed(Conv2D)") {
  expect_layer_passes({.make = [] { return K::layers::TimeDistributed(K::layers::Dense(3, {.activation = "tanh"})); },
                       .input_shapes = {{4, 2}},
                       .expected_output_shape = K::Shape{4, 3},
                       .expected_trainable_weights = 2,
                       .expected_non_trainable_weights = 0});
  expect_layer_passes({.make = [] { return K::layers::TimeDistributed(K::layers::Conv2D(2, 2)); },
                       .input_shapes = {{2, 3, 3, 1}},
                       .expected_output_shape = K::Shape{2, 2, 2, 2},
                       .expected_trainable_weights = 2});
}

TEST_CASE("TimeDistributed(Dense): each step through the Dense alone, the mask passed on") {
  layer_on_cpu::Replica rep;
  auto dense = K::layers::Dense(2, {.activation = "tanh", .seed = 3});
  auto wrapped = K::layers::TimeDistributed(dense);
  const K::Tensor x = layer_on_cpu::tensor_of({2, 3, 4}, [](std::int64_t i) { return 0.1f * float(i % 7) - 0.3f; });
  K::LayerState st;
  st.input_masks = {K::Tensor::from_vector({2, 3}, std::vector<std::uint8_t>{1, 0, 1, 1, 1, 0})};
  auto y = layer_on_cpu::forward(rep, wrapped, {x}, st).at(0);
  CHECK(y.shape() == K::Shape{2, 3, 2});
  auto yv = y.to_vector(), xv = x.to_vector();
  auto w = dense->trainable_variables();
  REQUIRE(w.size() == 2);
  auto kv = w[0]->value(0).to_vector(), bv = w[1]->value(0).to_vector();
  for (int r = 0; r < 6; ++r)
    for (int u = 0; u < 2; ++u) {
      double z = bv[u];
      for (int d = 0; d < 4; ++d) z += double(xv[r * 4 + d]) * kv[d * 2 + u];
      CHECK(yv[r * 2 + u] == doctest::Approx(std::tanh(z)).epsilon(1e-5));
    }
  auto masks = wrapped->compute_output_masks(rep.ctx, {x}, {y}, st);
  REQUIRE(masks.size() == 1);
  CHECK(masks[0].to_vector() == st.input_masks[0].to_vector());
  CHECK(wrapped->get_config()["layer"]["class_name"] == "Dense");
}
