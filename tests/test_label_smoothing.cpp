// Label smoothing is the plain crossentropy on smoothed targets (loss and gradient), leaves the
// dataset's targets alone, and refuses what Keras refuses. Values against Keras:
// tests/python/test_loss_values.py.
#include <doctest/doctest.h>

#include "kerascpp/kerascpp.hpp"
#include "kerascpp/testing.hpp"

namespace K = kerascpp;
namespace L = kerascpp::losses;

TEST_CASE("label smoothing: equals the crossentropy of smoothed targets, loss and gradient") {
  auto be = K::make_cpu_backend(1);
  auto pred = K::Tensor::from_vector({2, 4}, {0.7f, 0.1f, 0.1f, 0.1f, 0.2f, 0.2f, 0.5f, 0.1f});
  auto onehot = K::Tensor::from_vector({2, 4}, {1.f, 0.f, 0.f, 0.f, 0.f, 0.f, 1.f, 0.f});
  const auto original = onehot.to_vector();
  // s = 0.2 over 4 classes: 1 -> 0.85, 0 -> 0.05.
  auto by_hand = K::Tensor::from_vector({2, 4}, {0.85f, 0.05f, 0.05f, 0.05f, 0.05f, 0.05f, 0.85f, 0.05f});
  K::Tensor l1({2}), g1 = K::Tensor::zeros({2, 4}), l2({2}), g2 = K::Tensor::zeros({2, 4});
  L::CategoricalCrossentropy({.label_smoothing = 0.2}).compute(*be, pred, onehot, l1, g1, 0.5f);
  L::CategoricalCrossentropy().compute(*be, pred, by_hand, l2, g2, 0.5f);
  CHECK(K::testing::allclose(l1, l2, 1e-6, 1e-7));
  CHECK(K::testing::allclose(g1, g2, 1e-6, 1e-7));
  CHECK(onehot.to_vector() == original);  // the batch's targets are not modified
  K::Tensor l3({2}), none;
  L::CategoricalCrossentropy().compute(*be, pred, onehot, l3, none, 0.5f);
  CHECK_FALSE(K::testing::allclose(l1, l3, 1e-3, 1e-3));  // and it does change the loss
}

TEST_CASE("label smoothing: bad values and sparse labels are refused") {
  CHECK_THROWS_WITH_AS(L::CategoricalCrossentropy({.label_smoothing = 1.5}),
                       doctest::Contains("label_smoothing must be in [0, 1]"), K::ValueError);
  CHECK_THROWS_WITH_AS(L::BinaryCrossentropy({.label_smoothing = -0.1}),
                       doctest::Contains("label_smoothing must be in [0, 1]"), K::ValueError);
  CHECK_THROWS_WITH_AS(L::SparseCategoricalCrossentropy({.label_smoothing = 0.1}),
                       doctest::Contains("needs one-hot targets"), K::ValueError);
}
