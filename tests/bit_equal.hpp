// Whether two host tensors hold the same bits: same dtype and element count, every byte equal
// (NaN payloads and the sign of zero count). Shapes may differ, so a reshaped result can be
// compared with the original; tests that care about the shape check it themselves.
#pragma once
#include <cstring>

#include "kerascpp/tensor/tensor.hpp"

namespace kerascpp_test {

inline bool bit_equal(const kerascpp::Tensor& a, const kerascpp::Tensor& b) {
  return a.dtype() == b.dtype() && a.numel() == b.numel() && std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0;
}

}  // namespace kerascpp_test
