// Vector conversions between float32 and the 16-bit floats (bfloat16, float16) for the CPU
// backend's cast and the operands of mixed-precision matmuls and convolutions. Each rounds
// exactly as the scalar conversions of tensor/low_precision.hpp (round to nearest even, NaN kept
// quiet, subnormals kept). Single-threaded: callers split the range.
#pragma once
#include <cstdint>

#include "kerascpp/tensor/tensor.hpp"

namespace kerascpp::cpu {

// n float32 values to `to` (bfloat16 or float16).
void narrow_floats(const float* src, std::uint16_t* dst, DType to, std::int64_t n);
// n values of `from` (bfloat16 or float16) to float32.
void widen_floats(const std::uint16_t* src, DType from, float* dst, std::int64_t n);
// dst = src rounded to `dtype` (bfloat16 or float16) and kept as float32; dst may be src.
void round_floats(const float* src, float* dst, DType dtype, std::int64_t n);

}  // namespace kerascpp::cpu
