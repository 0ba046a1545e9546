// The fixed problem of the optimizer update-rule tests (test_optimizer_nadam.cpp,
// test_optimizers_adamw_adagrad.cpp, test_optimizers_keras_more.cpp): one variable of kSize elements, kSteps steps of
// fixed sign-changing gradients, compared with a double-precision reference of Keras' rule; and a small model trained
// on 1 or 2 replicas.
#pragma once
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "kerascpp/kerascpp.hpp"
#include "mirrored_fixture.hpp"

namespace optimizer_steps {

namespace K = kerascpp;

constexpr int kSteps = 20;
constexpr int kSize = 7;

// The gradient of element i at step t, and its starting value.
inline double grad_at(int i, int t) { return std::sin(0.7 * i + 0.3 * t) * (0.5 + 0.1 * i); }
inline double initial_at(int i) { return 0.25 * i - 0.6; }

// Runs `opt` for kSteps steps on one variable and returns its final value.
inline std::vector<float> run_optimizer(K::optimizers::Optimizer& opt) {
  std::vector<float> init(kSize);
  for (int i = 0; i < kSize; ++i) init[static_cast<std::size_t>(i)] = static_cast<float>(initial_at(i));
  K::Variable w("w", K::Tensor::from_vector(K::Shape{kSize}, init), true);
  opt.build({&w}, 1);
  auto backend = K::make_cpu_backend(1);
  K::ReplicaContext ctx;
  ctx.backend = backend.get();
  for (int t = 0; t < kSteps; ++t) {
    float* g = w.grad(0).data<float>();
    for (int i = 0; i < kSize; ++i) g[i] = static_cast<float>(grad_at(i, t));
    // As a training step: the gradients made ready (clipped, accumulated), then applied.
    if (opt.prepare_gradients(ctx, {&w})) opt.apply(*backend, 0, 0, w);
    opt.finish_step();
  }
  return w.value(0).to_vector();
}

// got within 1e-5 of the reference, and the reference moved away from the start (else the check
// would mean nothing).
inline void check_close(const std::vector<float>& got, const std::vector<double>& want) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i);
    CHECK(std::fabs(double(got[i]) - want[i]) <= 1e-5);
    CHECK(std::fabs(want[i] - initial_at(static_cast<int>(i))) > 1e-3);
  }
}

// 20 steps of the mirrored fixture's small convnet (synced batch norm: replicas see the global
// batch): 160 examples in batches of 16, two epochs. Returns the weights; `keep` gets the model.
inline std::vector<K::Tensor> train(K::distribute::Strategy strategy, K::optimizers::OptimizerRef opt,
                                    K::Model* keep = nullptr) {
  K::Model model = mirrored_fixture::small_convnet(true);
  model.compile({.optimizer = opt, .loss = "sparse_categorical_crossentropy", .distribute = strategy});
  auto d = mirrored_fixture::make_data(160);
  model.fit(K::Dataset::from_tensor_slices(d.x, d.y).batch(16), {.epochs = 2, .verbose = 0});
  if (keep) *keep = model;
  return model.get_weights();
}

}  // namespace optimizer_steps
