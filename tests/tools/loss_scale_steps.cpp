// loss_scale_steps: drives tests/python/test_loss_scale.py, which checks LossScaleOptimizer
// against Keras 3's (JAX backend) and its state against Keras' weights-file layout.
//   loss_scale_steps <dir> <replicas> <steps> [<weights file>]
// builds Input(4) -> Dense(6, relu, L2(0.01) kernel) -> Dense(3), compiles LossScaleOptimizer(Adam(0.01), initial_scale
// 1024, dynamic_growth_steps 3) with mean squared error (under MirroredStrategy with `replicas` CPU replicas when > 1),
// loads <dir>/initial.weights.h5 (or the weights file given, optimizer state included when it has one), trains one
// train_on_batch per step on batch k of <dir>/x.f32 [steps, 8, 4] and <dir>/y.f32 [steps, 8, 3], and writes
// <dir>/trained.weights.h5 (weights and optimizer state). Prints each step's loss, then
// "scale <s> counter <c> iterations <i>".
#include <kerascpp/kerascpp.hpp>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "tool_io.hpp"

namespace K = kerascpp;
namespace O = kerascpp::optimizers;
namespace fs = std::filesystem;

int main(int argc, char** argv) {
  if (argc != 4 && argc != 5) {
    std::fprintf(stderr, "usage: loss_scale_steps <dir> <replicas> <steps> [<weights file>]\n");
    return 2;
  }
  const fs::path dir = argv[1];
  const int replicas = std::stoi(argv[2]);
  const std::int64_t steps = std::stoll(argv[3]), batch = 8;
  auto in = K::Input({4});
  auto h = K::layers::Dense(6, {.activation = "relu", .kernel_regularizer = K::regularizers::L2(0.01)})(in);
  K::Model model(in, K::layers::Dense(3)(h));
  K::CompileOptions options{
      .optimizer = O::LossScaleOptimizer(O::Adam(0.01), {.initial_scale = 1024, .dynamic_growth_steps = 3}),
      .loss = "mse"};
  if (replicas > 1) options.distribute = K::distribute::MirroredStrategy<>(replicas);
  model.compile(options);
  model.load_weights(argc == 5 ? std::string(argv[4]) : (dir / "initial.weights.h5").string());
  const std::vector<float> x = tool_io::read_f32(dir / "x.f32"), y = tool_io::read_f32(dir / "y.f32");
  for (std::int64_t k = 0; k < steps; ++k) {
    std::vector<float> xk(x.begin() + k * batch * 4, x.begin() + (k + 1) * batch * 4);
    std::vector<float> yk(y.begin() + k * batch * 3, y.begin() + (k + 1) * batch * 3);
    const K::Logs logs =
        model.train_on_batch(K::Tensor::from_vector({batch, 4}, xk), K::Tensor::from_vector({batch, 3}, yk));
    std::printf("%s\n", tool_io::g17(logs["loss"]).c_str());
  }
  model.save_weights((dir / "trained.weights.h5").string());
  auto& lso = dynamic_cast<O::LossScaleOptimizer&>(model.optimizer());
  std::printf("scale %s counter %lld iterations %lld\n", tool_io::g17(lso.loss_scale()).c_str(),
              static_cast<long long>(lso.step_counter()), static_cast<long long>(lso.iterations()));
  return 0;
}
