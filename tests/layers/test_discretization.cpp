// discretization: run_layer_test with fixed boundaries; bins as numpy's digitize defines them
// (b[i-1] <= x < b[i] gives i); adapt() on few values puts the boundaries at the quantiles
// Keras' compressed summary interpolates (exact points for evenly spread weights); bad use refused.
#include "expect_layer_passes.hpp"
#include "kerascpp/layers/discretization.hpp"
#include "layer_on_cpu.hpp"

#include <algorithm>
#include <vector>

TEST_CASE("layer test: Discretization, int ids and an encoding") {
  expect_layer_passes(
      {.make = [] { return K::LayerRef(K::layers::Discretization({.bin_boundaries = {{-0.5f, 0.f, 0.5f}}})); },
       .input_shapes = {{4}},
       .expected_output_shape = K::Shape{4},
       .expected_trainable_weights = 0,
       .expected_non_trainable_weights = 0,
       .check_gradients = false});
  expect_layer_passes({.make =
                           [] {
                             return K::LayerRef(
                                 K::layers::Discretization({.bin_boundaries = {{0.f, 0.5f}}, .output_mode = "count"}));
                           },
                       .input_shapes = {{4}},
                       .expected_output_shape = K::Shape{3},
                       .expected_trainable_weights = 0,
                       .expected_non_trainable_weights = 0,
                       .check_gradients = false});
}

TEST_CASE("Discretization: digitize's bins, adapt's quantiles, refusals") {
  using namespace layer_on_cpu;
  const std::vector<float> bounds = {-1.f, 0.f, 2.f};
  const K::Tensor x = K::Tensor::from_vector({2, 4}, {-3.f, -1.f, -0.5f, 0.f, 1.f, 2.f, 7.f, 1.99f});
  Replica rep;
  K::LayerState st;
  const auto y = forward(rep, K::layers::Discretization({.bin_boundaries = bounds}), {x}, st).at(0);
  CHECK(y.dtype() == K::DType::float32);  // whole numbers: kerascpp's layer outputs are float32
  const auto xv = x.to_vector(), yv = y.to_vector();
  for (std::size_t i = 0; i < xv.size(); ++i)  // the number of boundaries <= x
    CHECK(yv[i] ==
          static_cast<float>(std::count_if(bounds.begin(), bounds.end(), [&](float b) { return b <= xv[i]; })));

  // 8 values, 4 bins: every value weighs 1, so the boundaries are the 2nd, 4th and 6th smallest.
  const std::vector<float> values = {5.f, -2.f, 9.f, 0.5f, 3.f, 7.f, -4.f, 1.f};
  auto adapted = K::layers::Discretization({.num_bins = 4});
  adapted->adapt(K::Dataset::from_tensor_slices(K::Tensor::from_vector({8}, values)).batch(8));
  std::vector<float> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  CHECK(adapted->bin_boundaries() == std::vector<float>{sorted[1], sorted[3], sorted[5]});

  CHECK_THROWS_AS(K::layers::Discretization({}), K::ValueError);
  CHECK_THROWS_AS(K::layers::Discretization({.bin_boundaries = {{1.f}}, .num_bins = 2}), K::ValueError);
  CHECK_THROWS_AS(K::layers::Discretization({.bin_boundaries = {{1.f, 0.f}}}), K::ValueError);
  CHECK_THROWS_AS(K::layers::Discretization({.bin_boundaries = {{1.f}}})->adapt(K::Dataset::from_tensor_slices(x)),
                  K::ValueError);
  Replica rep2;
  K::LayerState st2;
  CHECK_THROWS_AS(forward(rep2, K::layers::Discretization({.num_bins = 3}), {x}, st2), K::StateError);
}
