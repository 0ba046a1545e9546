// bn_step_bench: the training step time of a Conv2D-BatchNormalization-ReLU network, to compare
// BatchNormalization implementations (the step-speed numbers of the README's Numerics section).
//   bn_step_bench <filters> <batch> <steps> <threads>
// Input(28, 28, 1) → Conv2D(filters, 3) → BN → ReLU → Conv2D(filters, 3) → BN → ReLU → Flatten
// → Dense(10, softmax), SGD, random data; BN sees batch·26·26 and batch·24·24 rows of `filters`
// channels. After 3 warm-up steps, prints the median wall time and process CPU time of a step
// over `steps` steps. CPU time is the steadier figure on a busy machine (another process's time
// slices do not count), as long as threads do not spin while waiting.
#include <kerascpp/kerascpp.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

namespace K = kerascpp;

namespace {

double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int positive(const char* arg, const char* what) {
  char* end = nullptr;
  long v = std::strtol(arg, &end, 10);
  if (*end != '\0' || v <= 0) throw K::ValueError(std::string(what) + " must be a positive integer, got '" + arg + "'");
  return static_cast<int>(v);
}

int run(int filters, int batch, int steps, int threads) {
  K::set_random_seed(1);
  auto inputs = K::Input({28, 28, 1});
  K::KerasTensor x = inputs;
  for (int i = 0; i < 2; ++i) {
    x = K::layers::Conv2D(filters, 3)(x);
    x = K::layers::BatchNormalization()(x);
    x = K::layers::Activation("relu")(x);
  }
  x = K::layers::Flatten()(x);
  K::Model model(inputs, K::layers::Dense(10, {.activation = "softmax"})(x));
  model.compile({.optimizer = K::optimizers::SGD(0.01),
                 .loss = K::losses::SparseCategoricalCrossentropy(),
                 .distribute = K::distribute::OneDeviceStrategy("cpu:0", {.threads_per_replica = threads})});
  K::Rng rng(2);
  std::vector<float> images(static_cast<std::size_t>(batch) * 28 * 28);
  for (auto& v : images) v = rng.uniform();
  std::vector<std::int32_t> labels(static_cast<std::size_t>(batch));
  for (auto& l : labels) l = static_cast<std::int32_t>(rng.next_u64() % 10);
  K::Tensor xs = K::Tensor::from_vector({batch, 28, 28, 1}, images);
  K::Tensor ys = K::Tensor::from_vector({batch}, labels);
  for (int i = 0; i < 3; ++i) model.train_on_batch(xs, ys);
  std::vector<double> wall, cpu;
  for (int i = 0; i < steps; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    double c0 = cpu_seconds();
    model.train_on_batch(xs, ys);
    cpu.push_back(cpu_seconds() - c0);
    wall.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::printf("filters %d batch %d threads %d: step median wall %.2f ms, cpu %.2f ms (%d steps)\n", filters, batch,
              threads, 1e3 * median(wall), 1e3 * median(cpu), steps);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: bn_step_bench <filters> <batch> <steps> <threads>\n");
    return 2;
  }
  try {
    return run(positive(argv[1], "filters"), positive(argv[2], "batch"), positive(argv[3], "steps"),
               positive(argv[4], "threads"));
  } catch (const K::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
