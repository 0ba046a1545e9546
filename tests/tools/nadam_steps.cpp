// Runs Nadam for STEPS steps on one variable of SIZE values and prints the final values, then
// u_product, for tests/python/test_nadam_steps.py to compare with Keras' apply_gradients.
// stdin: SIZE initial values, then STEPS*SIZE gradients (step by step).
//   nadam_steps LR BETA_1 BETA_2 EPSILON STEPS SIZE < values
#include <kerascpp/kerascpp.hpp>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <vector>

namespace K = kerascpp;

int main(int argc, char** argv) {
  if (argc != 7) {
    std::fprintf(stderr, "usage: %s LR BETA_1 BETA_2 EPSILON STEPS SIZE < values\n", argv[0]);
    return 2;
  }
  const int steps = std::atoi(argv[5]);
  const std::int64_t size = std::atoll(argv[6]);
  std::vector<float> init(static_cast<std::size_t>(size));
  for (float& x : init)
    if (!(std::cin >> x)) return 2;
  K::optimizers::Nadam opt(std::atof(argv[1]),
                           {.beta_1 = std::atof(argv[2]), .beta_2 = std::atof(argv[3]), .epsilon = std::atof(argv[4])});
  K::Variable w("w", K::Tensor::from_vector(K::Shape{size}, init), true);
  opt.build({&w}, 1);
  auto backend = K::make_cpu_backend(1);
  for (int s = 0; s < steps; ++s) {
    float* g = w.grad(0).data<float>();
    for (std::int64_t i = 0; i < size; ++i)
      if (!(std::cin >> g[i])) return 2;
    opt.apply(*backend, 0, 0, w);
    opt.finish_step();
  }
  for (float x : w.value(0).to_vector()) std::printf("%.9g\n", x);
  std::printf("%.9g\n", opt.u_product());
  return 0;
}
