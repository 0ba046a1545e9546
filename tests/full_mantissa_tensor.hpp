// Test values with full float32 mantissas (so that rounding to 16 bits changes them) from a
// linear congruential generator: deterministic across platforms, in [-1, 1).
#pragma once
#include <cstdint>
#include <vector>

#include "kerascpp/tensor/tensor.hpp"

namespace kerascpp_test {

inline kerascpp::Tensor full_mantissa_tensor(const kerascpp::Shape& shape, std::uint32_t seed) {
  std::vector<float> v(static_cast<std::size_t>(kerascpp::shape_numel(shape)));
  for (auto& x : v) {
    seed = seed * 1664525u + 1013904223u;
    x = static_cast<float>(seed >> 8) / static_cast<float>(1u << 24) * 2.f - 1.f;
  }
  return kerascpp::Tensor::from_vector(shape, v);
}

}  // namespace kerascpp_test
