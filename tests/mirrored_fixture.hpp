// The model and data of the mirrored-exactness tests, shared by the CPU suite
// (tests/test_mirrored.cpp) and the GPU suite (tests/gpu/test_gpu_strategy.cpp).
#pragma once
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "kerascpp/kerascpp.hpp"

namespace mirrored_fixture {

namespace K = kerascpp;

inline K::Model small_convnet(bool synchronized_bn) {
  K::set_random_seed(7);
  auto in = K::Input({6, 6, 2});
  // No conv bias before BN (as in ResNet): BN cancels it, so its gradient is pure rounding noise,
  // which Adam would normalise into lr-sized steps on any strategy, one device included.
  auto x = K::layers::Conv2D(4, 3, {.padding = K::Padding::same, .use_bias = false})(in);
  x = K::layers::BatchNormalization({.synchronized = synchronized_bn})(x);
  x = K::layers::Activation("relu")(x);
  x = K::layers::MaxPooling2D(2)(x);
  x = K::layers::Flatten()(x);
  x = K::layers::Dense(8, {.activation = "tanh"})(x);
  auto out = K::layers::Dense(3, {.activation = "softmax"})(x);
  return K::Model(in, out);
}

struct Data {
  K::Tensor x, y;
};

// n random examples (host tensors), the same for every call.
inline Data make_data(std::int64_t n) {
  K::Rng rng(99);
  K::Tensor x({n, 6, 6, 2}, K::DType::float32, K::Device{});
  K::Tensor y({n}, K::DType::int32, K::Device{});
  for (std::int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = static_cast<float>(rng.normal());
  for (std::int64_t i = 0; i < n; ++i) y.data<std::int32_t>()[i] = static_cast<std::int32_t>(rng.next_u64() % 3);
  return {x, y};
}

// The largest |a - b| over every element of two weight lists (fails the test on a size mismatch).
inline double max_abs_diff(const std::vector<K::Tensor>& a, const std::vector<K::Tensor>& b) {
  REQUIRE(a.size() == b.size());
  double m = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    auto va = a[i].to_vector(), vb = b[i].to_vector();
    REQUIRE(va.size() == vb.size());
    for (std::size_t j = 0; j < va.size(); ++j) m = std::max(m, std::fabs(double(va[j]) - double(vb[j])));
  }
  return m;
}

}  // namespace mirrored_fixture
