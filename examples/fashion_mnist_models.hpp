// The Fashion-MNIST models, defined once for examples/fashion_mnist.cpp and bench/ (so the
// benchmark measures the networks the example trains):
//   "mlp"        784-512-256-10 (784-W-W-10 when mlp_width W > 0: the benchmark's large MLP)
//   "cnn"        the official models' MNIST CNN
//   "small_cnn"  conv32-pool-conv64-pool-dense128 (the benchmark's CNN)
#pragma once
#include <kerascpp/kerascpp.hpp>

#include <cstdint>
#include <string>

namespace examples {

inline kerascpp::Model fashion_mnist_model(const std::string& kind, std::int64_t mlp_width = 0) {
  namespace K = kerascpp;
  auto inputs = K::Input({28, 28, 1});
  K::KerasTensor x = inputs;
  if (kind == "mlp") {
    x = K::layers::Flatten()(x);
    x = K::layers::Dense(mlp_width > 0 ? mlp_width : 512, {.activation = "relu"})(x);
    x = K::layers::Dense(mlp_width > 0 ? mlp_width : 256, {.activation = "relu"})(x);
  } else if (kind == "cnn") {
    // The official models' MNIST CNN: 5x5 "same" convolutions, a wide dense layer and dropout.
    x = K::layers::Conv2D(32, 5, {.padding = K::Padding::same, .activation = "relu"})(x);
    x = K::layers::MaxPooling2D(2, {.padding = K::Padding::same})(x);
    x = K::layers::Conv2D(64, 5, {.padding = K::Padding::same, .activation = "relu"})(x);
    x = K::layers::MaxPooling2D(2, {.padding = K::Padding::same})(x);
    x = K::layers::Flatten()(x);
    x = K::layers::Dense(1024, {.activation = "relu"})(x);
    x = K::layers::Dropout(0.4f)(x);
  } else if (kind == "small_cnn") {
    // conv32-pool-conv64-pool-dense128: the benchmark workload of bench/.
    x = K::layers::Conv2D(32, 3, {.activation = "relu"})(x);
    x = K::layers::MaxPooling2D(2)(x);
    x = K::layers::Conv2D(64, 3, {.activation = "relu"})(x);
    x = K::layers::MaxPooling2D(2)(x);
    x = K::layers::Flatten()(x);
    x = K::layers::Dense(128, {.activation = "relu"})(x);
  } else {
    throw K::ValueError("--model must be mlp, cnn or small_cnn, got '" + kind + "'");
  }
  auto outputs = K::layers::Dense(10, {.activation = "softmax"})(x);
  return K::Model(inputs, outputs, kind);
}

}  // namespace examples
