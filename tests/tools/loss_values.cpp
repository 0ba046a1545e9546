// Prints a loss's per-example values for predictions and targets read from stdin (N*D
// predictions, then N*D targets), for tests/python/test_loss_values.py to compare with Keras.
//   loss_values huber DELTA N D < values
//   loss_values categorical_crossentropy|binary_crossentropy LABEL_SMOOTHING N D < values
//   loss_values sparse_top_k K N D < values   (N*D scores, then N integer labels; prints the hits)
#include <kerascpp/kerascpp.hpp>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

namespace K = kerascpp;

int main(int argc, char** argv) {
  const std::string kind = argc == 5 ? argv[1] : "";
  if (kind == "sparse_top_k") {
    const std::int64_t n = std::atoll(argv[3]), d = std::atoll(argv[4]);
    std::vector<float> pred(static_cast<std::size_t>(n * d));
    K::Tensor labels({n}, K::DType::int32, K::Device{});
    for (float& x : pred)
      if (!(std::cin >> x)) return 2;
    for (std::int64_t i = 0; i < n; ++i)
      if (!(std::cin >> labels.data<std::int32_t>()[i])) return 2;
    auto backend = K::make_cpu_backend(1);
    std::printf("%.17g\n",
                backend->sparse_top_k_accuracy_sum(K::Tensor::from_vector({n, d}, pred), labels, std::atoi(argv[2])));
    return 0;
  }
  if (kind != "huber" && kind != "categorical_crossentropy" && kind != "binary_crossentropy") {
    std::fprintf(stderr, "usage: %s huber|categorical_crossentropy|binary_crossentropy PARAM N D < values\n", argv[0]);
    return 2;
  }
  const double param = std::atof(argv[2]);
  const std::int64_t n = std::atoll(argv[3]), d = std::atoll(argv[4]);
  std::vector<float> pred(static_cast<std::size_t>(n * d)), target(pred.size());
  for (auto* v : {&pred, &target})
    for (float& x : *v)
      if (!(std::cin >> x)) return 2;
  std::shared_ptr<K::losses::Loss> loss;
  if (kind == "huber") loss = std::make_shared<K::losses::Huber>(param);
  else if (kind == "categorical_crossentropy")
    loss =
        std::make_shared<K::losses::CategoricalCrossentropy>(K::losses::CrossentropyOptions{.label_smoothing = param});
  else loss = std::make_shared<K::losses::BinaryCrossentropy>(K::losses::CrossentropyOptions{.label_smoothing = param});
  auto backend = K::make_cpu_backend(1);
  K::Tensor out({n}), no_grad;
  loss->compute(*backend, K::Tensor::from_vector({n, d}, pred), K::Tensor::from_vector({n, d}, target), out, no_grad,
                1.f);
  for (float v : out.to_vector()) std::printf("%.9g\n", v);
  return 0;
}
