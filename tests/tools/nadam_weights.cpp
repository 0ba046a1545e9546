// Nadam's state in a .weights.h5 file exchanged with Keras (tests/python/test_nadam_steps.py):
//   nadam_weights save DIR   trains Input(4) -> Dense(3) with Nadam for 3 steps and writes
//                            DIR/model.weights.h5; prints "iterations I u_product U"
//   nadam_weights load DIR   loads DIR/model.weights.h5 into the same compiled model and prints
//                            the same line
#include <kerascpp/kerascpp.hpp>

#include <cstdio>
#include <string>
#include <vector>

namespace K = kerascpp;

int main(int argc, char** argv) {
  const std::string mode = argc == 3 ? argv[1] : "";
  if (mode != "save" && mode != "load") {
    std::fprintf(stderr, "usage: %s save|load DIR\n", argv[0]);
    return 2;
  }
  const std::string path = std::string(argv[2]) + "/model.weights.h5";
  try {
    K::set_random_seed(1);
    auto in = K::Input({4});
    K::Model model(in, K::layers::Dense(3)(in));
    auto nadam = std::make_shared<K::optimizers::Nadam>(0.01);
    model.compile({.optimizer = std::shared_ptr<K::optimizers::Optimizer>(nadam), .loss = "mse"});
    if (mode == "save") {
      std::vector<float> x(48), y(36);
      for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 37 % 11) / 11.0 - 0.5);
      for (std::size_t i = 0; i < y.size(); ++i) y[i] = static_cast<float>((i * 13 % 7) / 7.0);
      auto data =
          K::Dataset::from_tensor_slices(K::Tensor::from_vector({12, 4}, x), K::Tensor::from_vector({12, 3}, y));
      model.fit(data.batch(4), {.epochs = 1, .verbose = 0});
      model.save_weights(path);
    } else {
      model.load_weights(path);
    }
    std::printf("iterations %lld u_product %.9g\n", static_cast<long long>(nadam->iterations()), nadam->u_product());
    return 0;
  } catch (const K::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
