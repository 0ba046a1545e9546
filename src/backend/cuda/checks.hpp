// Argument checks of the CUDA backend's ops: like the CPU backend's, but tensors must live on
// the backend's GPU. Each throws kerascpp::Error naming the op, the argument and the fix.
#pragma once
#include <initializer_list>

#include "kerascpp/tensor/tensor.hpp"

namespace kerascpp::cuda {

// Defined, float32 and on `device`.
void require_float_on(const Tensor& t, Device device, const char* op, const char* arg);
// Defined and on `device` (any dtype: labels).
void require_on(const Tensor& t, Device device, const char* op, const char* arg);
// An output: allocated as float32 `shape` on `device` when undefined, otherwise it must have
// that shape and live there.
void prepare_output_on(Tensor& t, const Shape& shape, Device device, const char* op, const char* arg);
void prepare_output_on(Tensor& t, std::initializer_list<std::int64_t> shape, Device device, const char* op,
                       const char* arg);

}  // namespace kerascpp::cuda
