// Prints a loss's per-example values for predictions and targets read from stdin (N*D
// predictions, then N*D targets), for tests/python/test_huber_loss.py to compare with Keras.
//   loss_values huber DELTA N D < values
#include <kerascpp/kerascpp.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <vector>

namespace K = kerascpp;

int main(int argc, char** argv) {
  if (argc != 5 || std::strcmp(argv[1], "huber") != 0) {
    std::fprintf(stderr, "usage: %s huber DELTA N D < values\n", argv[0]);
    return 2;
  }
  const std::int64_t n = std::atoll(argv[3]), d = std::atoll(argv[4]);
  std::vector<float> pred(static_cast<std::size_t>(n * d)), target(pred.size());
  for (auto* v : {&pred, &target})
    for (float& x : *v)
      if (!(std::cin >> x)) return 2;
  K::losses::Huber loss(std::atof(argv[2]));
  auto backend = K::make_cpu_backend(1);
  K::Tensor out({n}), no_grad;
  loss.compute(*backend, K::Tensor::from_vector({n, d}, pred), K::Tensor::from_vector({n, d}, target), out, no_grad,
               1.f);
  for (float v : out.to_vector()) std::printf("%.9g\n", v);
  return 0;
}
