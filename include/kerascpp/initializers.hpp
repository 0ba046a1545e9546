// Keras weight initializers by name: glorot_uniform, glorot_normal, he_normal, he_uniform,
// zeros, ones. Fans follow Keras: Dense (in, out); Conv2D kernel (kh, kw, in, out).
#pragma once
#include <cstdint>
#include <string>

#include "kerascpp/tensor.hpp"

namespace kerascpp::initializers {

// Fills `t` (float32) following the named initializer; `where` names the layer for errors.
void initialize(Tensor& t, const std::string& name, std::uint64_t seed, const std::string& where);

}  // namespace kerascpp::initializers
