// Training on gpu:0 follows the CPU: the Fashion-MNIST MLP and the official MNIST CNN (the
// networks of examples/fashion_mnist.cpp) and the official ResNet-20 (examples/resnet.cpp), 50
// steps each from the same initial weights on the same batches, end within max|dw| <= 1e-4 of
// the CPU's weights. TF32 is off on the GPU (the backend's default), so the two differ only by
// float32 summation order; the bound is what 50 steps of that may add up to.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "../../examples/fashion_mnist_models.hpp"
#include "../../examples/resnet_models.hpp"
#include "gpu_test_util.hpp"
#include "kerascpp/kerascpp.hpp"

using namespace gputest;
namespace D = kerascpp::distribute;

namespace {

constexpr std::int64_t kSteps = 50, kBatch = 32;

struct Case {
  std::string name;
  K::Shape image;
  K::Model (*build)();
  K::optimizers::OptimizerRef (*optimizer)();
};

// Random images in [0, 1], labelled by their first pixel (a rule the models can learn, so the
// gradients stay informative), the same for every call.
K::Dataset parity_data(const K::Shape& image) {
  K::Rng rng(2024);
  K::Shape shape{kSteps * kBatch};
  shape.insert(shape.end(), image.begin(), image.end());
  K::Tensor x(shape, K::DType::float32, K::Device{});
  K::Tensor y({kSteps * kBatch}, K::DType::int32, K::Device{});
  const std::int64_t per = x.numel() / (kSteps * kBatch);
  float* px = x.data<float>();
  for (std::int64_t i = 0; i < kSteps * kBatch; ++i) {
    for (std::int64_t j = 0; j < per; ++j) px[i * per + j] = rng.uniform();
    y.data<std::int32_t>()[i] = static_cast<std::int32_t>(px[i * per] * 10.0f);
  }
  return K::Dataset::from_tensor_slices(x, y).batch(kBatch);
}

struct Run {
  std::vector<K::Tensor> initial, final;
  std::vector<std::string> paths;  // each weight's variable path, in get_weights() order
  std::vector<bool> trainable;     // and whether the optimizer moves it
};

// How far training moved the trainable weights (BatchNormalization's moving statistics move
// whatever the optimizer does, so they would make any run look trained).
double trained_distance(const Run& r) {
  double m = 0;
  for (std::size_t i = 0; i < r.initial.size(); ++i)
    if (r.trainable[i]) m = std::max(m, max_abs_diff({r.initial[i]}, {r.final[i]}));
  return m;
}

Run train_on(const Case& c, const D::Strategy& strategy, std::int64_t steps = kSteps) {
  K::set_random_seed(11);  // same initial weights and dropout streams on both devices
  K::Model model = c.build();
  Run r;
  r.initial = model.get_weights();
  for (const K::Variable* v : model.variables()) {
    r.paths.push_back(v->path());
    r.trainable.push_back(v->trainable());
  }
  model.compile({.optimizer = c.optimizer(),
                 .loss = K::losses::SparseCategoricalCrossentropy(),
                 .metrics = {"accuracy"},
                 .distribute = strategy});
  model.fit(parity_data(c.image), {.epochs = 1, .steps_per_epoch = steps, .verbose = 0});
  r.final = model.get_weights();
  return r;
}

// The weights that differ most between two runs, for the failure message: where a divergence
// starts (a first step already apart) says more than the maximum after 50 steps.
std::string worst_weights(const Run& a, const Run& b, std::size_t count) {
  std::vector<std::pair<double, std::size_t>> diffs;
  for (std::size_t i = 0; i < a.final.size(); ++i) diffs.emplace_back(max_abs_diff({a.final[i]}, {b.final[i]}), i);
  std::sort(diffs.rbegin(), diffs.rend());
  std::string out;
  for (std::size_t k = 0; k < std::min(count, diffs.size()); ++k) {
    const std::size_t i = diffs[k].second;
    const std::vector<K::Tensor> zero{K::Tensor::zeros(a.final[i].shape())};
    out += "\n    " + (i < a.paths.size() ? a.paths[i] : std::to_string(i)) + ": max|dw| " +
           std::to_string(diffs[k].first) + " (max|w| " + std::to_string(max_abs_diff({a.final[i]}, zero)) + ")";
  }
  return out;
}

}  // namespace

TEST_CASE("gpu training: MLP, CNN and ResNet-20 trained 50 steps on gpu:0 end within 1e-4 of the CPU") {
  const Case cases[] = {
      {"fashion_mnist mlp",
       {28, 28, 1},
       [] { return examples::fashion_mnist_model("mlp"); },
       []() -> K::optimizers::OptimizerRef { return K::optimizers::Adam(1e-3); }},
      {"fashion_mnist cnn (official, dropout 0.4)",
       {28, 28, 1},
       [] { return examples::fashion_mnist_model("cnn"); },
       []() -> K::optimizers::OptimizerRef { return K::optimizers::Adam(1e-3); }},
      // Plain SGD at 5e-4, not the official rate (0.1 per 128 with momentum 0.9): at that rate
      // this network is chaotic on these batches. On the CPU alone, moving one input value by
      // 1e-6 moved the weights by 1.1e-4 after 3 steps and 0.28 after 50, and an H200 (1.2e-7
      // from the CPU after one step) ended 0.23-0.25 away after 50, the same distance, so no
      // float32 summation order can meet 1e-4 there. At 5e-4 without momentum the same 1e-6
      // moved the CPU's weights by 1.5e-5 after 50 steps (2.5e-4 at 2e-3), while training
      // moved its trainable weights by up to 3.1e-3.
      {"resnet20 (official model with L2; SGD 5e-4)",
       {32, 32, 3},
       [] { return examples::resnet::cifar_resnet(20, 10); },
       []() -> K::optimizers::OptimizerRef { return K::optimizers::SGD(5e-4); }},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    Run cpu = train_on(c, D::OneDeviceStrategy("cpu:0"));
    Run gpu0 = train_on(c, D::OneDeviceStrategy("gpu:0"));
    REQUIRE(cpu.initial.size() == gpu0.initial.size());
    for (std::size_t i = 0; i < cpu.initial.size(); ++i) REQUIRE(bit_equal(cpu.initial[i], gpu0.initial[i]));
    const double moved = trained_distance(cpu);
    const double diff = max_abs_diff(cpu.final, gpu0.final);
    MESSAGE(c.name << ": gpu:0 vs cpu:0 after " << kSteps << " steps: max|dw| = " << diff
                   << " (training moved the trainable weights by up to " << moved << ")");
    CHECK(moved > 1e-3);  // the comparison is between trained models
    CHECK(diff <= 1e-4);
    if (diff > 1e-4) {
      const Run cpu1 = train_on(c, D::OneDeviceStrategy("cpu:0"), 1),
                gpu1 = train_on(c, D::OneDeviceStrategy("gpu:0"), 1);
      MESSAGE(c.name << ": the weights furthest apart after " << kSteps << " steps:" << worst_weights(cpu, gpu0, 4)
                     << "\n  and after 1 step (max|dw| " << max_abs_diff(cpu1.final, gpu1.final)
                     << "):" << worst_weights(cpu1, gpu1, 4));
    }
    for (auto& t : gpu0.final)
      for (float v : t.to_vector()) REQUIRE(std::isfinite(v));
  }
}
