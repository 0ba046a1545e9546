// Fashion-MNIST (Zalando): 60000 training and 10000 test 28x28 grey images of clothes in 10
// classes, read from the IDX files of the Debian package dataset-fashion-mnist.
#pragma once
#include <string>

#include "kerascpp/data/dataset.hpp"
#include "kerascpp/tensor/tensor.hpp"

/// Keras' keras.datasets.fashion_mnist, read from Debian's dataset-fashion-mnist.
namespace kerascpp::datasets::fashion_mnist {

/// The raw files: images uint8 (N, 28, 28), labels uint8 (N,).
struct Arrays {
  /// @{
  /// Training images and labels (60000), test images and labels (10000).
  Tensor x_train{}, y_train{}, x_test{}, y_test{};
  /// @}
};

/// Exactly two members so that `auto [train, test] = load();` works.
struct TrainTest {
  /// The 60000 training examples.
  Dataset train{};
  /// The 10000 test examples.
  Dataset test{};
};

/// Where the files are looked for: `dir` if given, else $KERASCPP_DATA (the directory itself or
/// its fashion-mnist/ subdirectory), else /usr/share/datasets/fashion-mnist.
std::string resolve_dir(const std::string& dir = "");

/// Reads train-images-idx3-ubyte(.gz), train-labels-idx1-ubyte(.gz), t10k-*: gzip or raw.
Arrays load_arrays(const std::string& dir = "");

/// Datasets of (image float32 (28, 28, 1) scaled to [0, 1], label int32 scalar): batch(B) gives
/// x (B, 28, 28, 1) and y (B,).
TrainTest load(const std::string& dir = "");

/// The names of labels 0..9.
inline constexpr const char* kClassNames[10] = {"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
                                                "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle boot"};

}  // namespace kerascpp::datasets::fashion_mnist
