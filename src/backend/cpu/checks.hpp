// Argument checks shared by the CPU backend's ops. Each throws kerascpp::Error naming the
// op, the argument, the shapes involved and what the caller should do instead.
#pragma once
#include <cstdint>
#include <initializer_list>

#include "backend/op_shapes.hpp"
#include "kerascpp/tensor/tensor.hpp"

namespace kerascpp::cpu {

// The device-agnostic checks live in backend/op_shapes.* (shared with the CUDA backend).
using op_shapes::has_shape;
using op_shapes::require_rank_at_least;
using op_shapes::require_same_shape;

// Defined, on the host and float32.
void require_float(const Tensor& t, const char* op, const char* arg);
// Two tensors of one dtype (mixed precision's 16-bit activations: `what` says why they must).
void require_same_dtype(const Tensor& a, const char* a_name, const Tensor& b, const char* b_name, const char* op,
                        const char* what);
// An output: allocated as float32 `shape` when undefined, otherwise it must have that shape.
void prepare_output(Tensor& t, const Shape& shape, const char* op, const char* arg);
void prepare_output(Tensor& t, std::initializer_list<std::int64_t> shape, const char* op, const char* arg);
// As above for the shape of `like` with its last axis replaced by `last`.
void prepare_output_last(Tensor& t, const Shape& like, std::int64_t last, const char* op, const char* arg);
// Integer class labels with one entry per row of pred viewed as [rows, classes]; float labels
// are rejected with a hint to cast them.
void require_labels(const Tensor& labels, const Tensor& pred, std::int64_t rows, const char* op);
// Throws naming the first label outside [0, classes).
void check_label_range(const Tensor& labels, std::int64_t classes, const Tensor& pred, const char* op);
// Reads label i of an int32/int64/uint8 tensor.
inline std::int64_t label_at(const Tensor& labels, std::int64_t i) {
  switch (labels.dtype()) {
    case DType::int32:
      return static_cast<const std::int32_t*>(labels.raw())[i];
    case DType::int64:
      return static_cast<const std::int64_t*>(labels.raw())[i];
    case DType::uint8:
      return static_cast<const std::uint8_t*>(labels.raw())[i];
    default:
      return -1;
  }
}

}  // namespace kerascpp::cpu
