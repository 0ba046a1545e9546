// A copy of a tensor in another dtype through the backend's own cast (float32 <-> 16 bits).
#pragma once
#include "kerascpp/kerascpp.hpp"

namespace kerascpp_test {

inline kerascpp::Tensor cast(kerascpp::Backend& be, const kerascpp::Tensor& t, kerascpp::DType dtype) {
  kerascpp::Tensor out;
  be.cast(t, dtype, out);
  return out;
}

}  // namespace kerascpp_test
