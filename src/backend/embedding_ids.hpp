// Shape and id checks shared by the CPU and CUDA embedding ops (gather_rows, scatter_add_rows):
// a float32 table [V, D], integer ids of any shape (int32, int64, uint8, or float32 holding
// integers: what a Dataset of float features gives), rows [ids..., D]. Plain throws with fmt, not
// KERASCPP_CHECK: this header is compiled into the CUDA library too.
#pragma once
#include <fmt/format.h>

#include <cmath>
#include <cstdint>

#include "backend/op_shapes.hpp"
#include "check.hpp"

namespace kerascpp::op_shapes {

inline void check_embedding_ids(const Tensor& ids, const char* op) {
  const DType t = ids.dtype();
  KERASCPP_CHECK_VALUE(!(t != DType::int32 && t != DType::int64 && t != DType::uint8 && t != DType::float32),
                       "{}: ids are {} but must be int32, int64, uint8 or float32 holding integers", op, dtype_name(t));
}

inline void check_embedding_table(const Tensor& table, const char* op, const char* arg) {
  KERASCPP_CHECK_SHAPE(table.dtype() == DType::float32 && table.rank() == 2,
                       "{}: {} must be a float32 (input_dim, output_dim) table, got {} {}", op, arg,
                       dtype_name(table.dtype()), shape_str(table.shape()));
}

// The shape of the looked-up rows: ids' shape with the row width appended.
inline Shape embedding_rows_shape(const Tensor& ids, std::int64_t width) {
  Shape s = ids.shape();
  s.push_back(width);
  return s;
}

// A float id is rounded to the nearest integer (it holds one); NaN and ±Inf map to -1 (invalid).
inline std::int64_t float_id(float v) {
  if (!std::isfinite(v) || std::fabs(v) > 9.0e18f) return -1;
  return static_cast<std::int64_t>(std::nearbyint(v));
}

[[noreturn]] inline void throw_id_out_of_range(std::int64_t value, std::int64_t position, std::int64_t rows,
                                               const char* op) {
  throw ValueError(
      fmt::format("{}: index {} at position {} is out of range for a table of {} rows; ids must lie in "
                  "[0, {}) (input_dim)",
                  op, value, position, rows, rows));
}

}  // namespace kerascpp::op_shapes
