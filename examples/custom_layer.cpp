// Extending kerascpp from a user's program: a custom layer (Swish with a trainable beta), a
// custom loss (log_cosh) and a custom metric (within_tolerance), all in custom_extensions.hpp and
// written only against the public headers. The program
//   1. checks the layer's and the loss's analytic gradients against finite differences with the
//      library's checker (kerascpp/testing/gradient_check.hpp),
//   2. trains a small regression model with them under MirroredStrategy on 2 CPU replicas,
// and exits non-zero when a gradient check fails or the loss does not go down.
#include <kerascpp/kerascpp.hpp>
#include <kerascpp/testing/gradient_check.hpp>

#include <cmath>
#include <cstdio>
#include <exception>
#include <memory>
#include <vector>

#include "custom_extensions.hpp"

namespace K = kerascpp;

namespace {

// y = x0 − 2·x1 + x2·x3 on uniform inputs in [−1, 1): learnable by a small MLP.
struct Data {
  K::Tensor x, y;
};
Data make_data(std::int64_t n) {
  K::Tensor x = K::testing::uniform_tensor({n, 4}, 42);
  const float* px = x.data<float>();
  std::vector<float> y(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    const float* r = px + i * 4;
    y[static_cast<std::size_t>(i)] = r[0] - 2.f * r[1] + r[2] * r[3];
  }
  return {x, K::Tensor::from_vector({n, 1}, y)};
}

bool gradient_checks() {
  // The layer: inputs and beta both away from 0 and 1 so that every term of backward matters.
  auto swish = std::make_shared<custom::Swish>("swish_check");
  (*swish)(K::Input({5}));  // builds it (creates beta)
  swish->trainable_variables()[0]->value(0).copy_from(K::Tensor::from_vector({1}, std::vector<float>{0.7f}));
  auto layer_result = K::testing::check_layer_gradients(swish, {K::testing::uniform_tensor({6, 5}, 1, -2.f, 2.f)});
  std::printf("Swish: %s\n", layer_result.summary().c_str());

  K::Tensor pred = K::testing::uniform_tensor({4, 3}, 2, -2.f, 2.f);
  K::Tensor target = K::testing::uniform_tensor({4, 3}, 3, -2.f, 2.f);
  auto loss_result = K::testing::check_loss_gradients(custom::LogCosh(), pred, target);
  std::printf("log_cosh: %s\n", loss_result.summary().c_str());
  return layer_result.passed() && loss_result.passed();
}

bool train() {
  K::set_random_seed(3);
  auto in = K::Input({4});
  auto h = K::layers::Dense(16)(in);
  h = K::LayerRef(std::make_shared<custom::Swish>())(h);
  auto out = K::layers::Dense(1)(h);
  K::Model model(in, out);
  model.compile({.optimizer = K::optimizers::Adam(0.02),
                 .loss = custom::LogCosh(),
                 .metrics = {"mae", custom::WithinTolerance(0.1f)},
                 .distribute = K::distribute::MirroredStrategy<>(2)});

  Data d = make_data(512);
  auto data = K::Dataset::from_tensor_slices(d.x, d.y).shuffle(512, 7).batch(64);
  auto history = model.fit(data, {.epochs = 15, .verbose = 2});
  const auto& loss = history.history.at("loss");
  const auto& close = history.history.at("within_tolerance");
  std::printf("loss %.5f -> %.5f, within_tolerance %.3f -> %.3f\n", loss.front(), loss.back(), close.front(),
              close.back());
  return std::isfinite(loss.back()) && loss.back() < 0.5 * loss.front();
}

}  // namespace

int main() {
  try {
    if (!gradient_checks()) {
      std::fprintf(stderr, "custom_layer: a gradient check failed\n");
      return 1;
    }
    if (!train()) {
      std::fprintf(stderr, "custom_layer: the loss did not go down by half\n");
      return 1;
    }
    std::printf("custom_layer: OK\n");
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "custom_layer: %s\n", e.what());
    return 1;
  }
}
