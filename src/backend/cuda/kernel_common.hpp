// Argument checks and shape helpers shared by kernel_ops_*.cpp (the CudaBackend ops that run
// hand-written kernels). The shape rules come from backend/op_shapes.* (shared with the CPU
// backend's checks.* and loss_common.hpp); here tensors are required on the backend's GPU.
#pragma once
#include <fmt/format.h>

#include <cstdint>
#include <cstring>
#include <initializer_list>

#include "backend/cuda/checks.hpp"
#include "backend/cuda/cuda_backend.hpp"
#include "backend/cuda/cuda_check.hpp"
#include "backend/cuda/device_runtime.hpp"
#include "backend/cuda/kernel_state.hpp"
#include "backend/cuda/kernels/kernels.hpp"
#include "backend/op_shapes.hpp"

namespace kerascpp::cuda::ops {

// The device-agnostic checks are shared with the CPU backend (backend/op_shapes.*), messages
// included; what is here adds the GPU side (tensors on the backend's device, label readback).
using op_shapes::has_shape;
using op_shapes::require_rank_at_least;
using op_shapes::require_same_shape;

// Rows of x viewed as [rows, x.dim(-1)].
inline std::int64_t rows_of(const Tensor& x) {
  std::int64_t rows = 1;
  for (int d = 0; d + 1 < x.rank(); ++d) rows *= x.shape()[static_cast<std::size_t>(d)];
  return rows;
}

// ---------------------------------------------------------------------- losses and metrics

// Predictions viewed as rows of their last axis, grouped per example (as on the CPU).
using op_shapes::RowLayout;

inline RowLayout class_rows(const Tensor& pred, Device device, const char* op) {
  require_float_on(pred, device, op, "pred");
  return op_shapes::class_rows_of(pred, op);
}

inline RowLayout element_rows(const Tensor& pred, Device device, const char* op) {
  require_float_on(pred, device, op, "pred");
  return op_shapes::element_rows_of(pred, op);
}

inline void require_target(const Tensor& target, const Tensor& pred, Device device, const char* op) {
  require_float_on(target, device, op, "target");
  op_shapes::check_target_shape(target, pred, op);
}

// Integer class labels on the GPU with one entry per row of pred viewed as [rows, classes].
inline int require_labels(const Tensor& labels, const Tensor& pred, std::int64_t rows, Device device, const char* op) {
  require_on(labels, device, op, "labels");
  op_shapes::check_labels(labels, pred, rows, op);
  switch (labels.dtype()) {
    case DType::int32:
      return kern::kLabelInt32;
    case DType::int64:
      return kern::kLabelInt64;
    case DType::uint8:
      return kern::kLabelUint8;
    default:
      throw ShapeError(
          fmt::format("{}: labels are {} but must be int32, int64 or uint8", op, dtype_name(labels.dtype())));
  }
}

// After a kernel reported label index `index` out of range: reads the label back (the stream is
// idle: the status fetch synchronised it) and throws the CPU backend's message.
[[noreturn]] inline void throw_bad_label(const Tensor& labels, unsigned long long index, std::int64_t classes,
                                         const Tensor& pred, cudaStream_t stream, const char* op) {
  std::int64_t value = -1;
  const std::size_t size = dtype_size(labels.dtype());
  unsigned char bytes[8] = {};
  const auto* src = static_cast<const unsigned char*>(labels.raw()) + index * size;
  KCPP_CUDA_CHECK(cudaMemcpyAsync(bytes, src, size, cudaMemcpyDeviceToHost, stream));
  KCPP_CUDA_CHECK(cudaStreamSynchronize(stream));
  switch (labels.dtype()) {
    case DType::int32: {
      std::int32_t v;
      std::memcpy(&v, bytes, sizeof v);
      value = v;
      break;
    }
    case DType::int64:
      std::memcpy(&value, bytes, sizeof value);
      break;
    default:
      value = bytes[0];
      break;
  }
  op_shapes::throw_label_out_of_range(value, static_cast<std::int64_t>(index), classes, pred, op);
}

}  // namespace kerascpp::cuda::ops
