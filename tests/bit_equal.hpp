// Whether two host tensors hold the same bits (same shape and dtype, every byte equal: NaN
// payloads and the sign of zero count), for the tests that demand results bit for bit.
#pragma once
#include <cstring>

#include "kerascpp/tensor.hpp"

namespace kerascpp_test {

inline bool bit_equal(const kerascpp::Tensor& a, const kerascpp::Tensor& b) {
  return a.shape() == b.shape() && a.dtype() == b.dtype() && std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0;
}

}  // namespace kerascpp_test
