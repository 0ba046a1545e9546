// CosineDecay and TransformerSchedule: their bad arguments are named, and they drive an optimizer
// (values against Keras and the official formula: tests/python/test_lr_schedules.py).
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "kerascpp/kerascpp.hpp"

namespace K = kerascpp;
namespace S = kerascpp::optimizers::schedules;

TEST_CASE("lr schedules: bad arguments are refused with the name of the argument") {
  CHECK_THROWS_WITH_AS(S::CosineDecay(0.1, 0), doctest::Contains("decay_steps must be positive"), K::ValueError);
  CHECK_THROWS_WITH_AS(S::CosineDecay(0.1, 10, {.alpha = 1.5}), doctest::Contains("alpha must be in [0, 1]"),
                       K::ValueError);
  CHECK_THROWS_WITH_AS(S::CosineDecay(0.1, 10, {.warmup_target = 0.2}), doctest::Contains("warmup_steps is 0"),
                       K::ValueError);
  CHECK_THROWS_WITH_AS(S::CosineDecay(std::numeric_limits<double>::quiet_NaN(), 10),
                       doctest::Contains("initial_learning_rate"), K::ValueError);
  CHECK_THROWS_WITH_AS(S::TransformerSchedule(2.0, 0, 100), doctest::Contains("hidden_size must be positive"),
                       K::ValueError);
  CHECK_THROWS_WITH_AS(S::TransformerSchedule(2.0, 512, 0), doctest::Contains("warmup_steps must be positive"),
                       K::ValueError);
}

TEST_CASE("lr schedules: the optimizer follows the schedule step by step") {
  // One weight, gradient 1 every step: SGD moves it by exactly the scheduled rate each step.
  for (int which = 0; which < 2; ++which) {
    CAPTURE(which);
    K::optimizers::LearningRate lr = which == 0 ? K::optimizers::LearningRate(S::CosineDecay(0.1, 4))
                                                : K::optimizers::LearningRate(S::TransformerSchedule(1.0, 4, 2));
    K::set_random_seed(1);
    auto in = K::Input({1});
    auto out = K::layers::Dense(1, {.use_bias = false, .kernel_initializer = K::initializers::Constant(0.0)})(in);
    K::Model model(in, out);
    model.compile({.optimizer = K::optimizers::SGD(lr), .loss = "mse"});
    std::vector<double> rates;
    for (std::int64_t step = 0; step < 6; ++step) {
      // x = 1, y = -1e6: d(mse)/dw = 2 (w - y) ~ 2e6; scale it away by comparing the change.
      K::Tensor x = K::Tensor::from_vector({1, 1}, {1.0f}), y = K::Tensor::from_vector({1, 1}, {-1e6f});
      const double before = model.get_weights()[0].to_vector()[0];
      model.train_on_batch(x, y);
      const double moved = before - model.get_weights()[0].to_vector()[0];
      const double grad = 2.0 * (before + 1e6);
      rates.push_back(lr.at(step));
      CHECK(moved / grad == doctest::Approx(rates.back()).epsilon(1e-3));
    }
    CHECK(rates.front() != rates.back());  // the steps really followed a changing rate
  }
}
