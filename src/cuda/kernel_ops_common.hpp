// Argument checks and shape helpers shared by kernel_ops_*.cpp (the CudaBackend ops that run
// hand-written kernels). They mirror backend/cpu/checks.* and loss_common.hpp, with tensors
// required on the backend's GPU instead of the host.
#pragma once
#include <fmt/format.h>

#include <cstdint>
#include <cstring>
#include <initializer_list>

#include "cuda/checks.hpp"
#include "cuda/cuda_backend.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/device_runtime.hpp"
#include "cuda/kernel_state.hpp"
#include "cuda/kernels/kernels.hpp"

namespace kerascpp::cuda::ops {

inline void require_same_shape(const Tensor& t, const char* arg, const Tensor& ref, const char* ref_arg,
                               const char* op) {
  if (t.shape() != ref.shape())
    throw Error(fmt::format("{}: `{}` has shape {} but `{}` has shape {}; they must match", op, arg,
                            shape_str(t.shape()), ref_arg, shape_str(ref.shape())));
}

inline void require_rank_at_least(const Tensor& t, int rank, const char* op, const char* arg) {
  if (t.rank() < rank)
    throw Error(fmt::format("{}: `{}` has shape {} but needs rank >= {}", op, arg, shape_str(t.shape()), rank));
}

inline bool has_shape(const Tensor& t, std::initializer_list<std::int64_t> shape) {
  if (t.shape().size() != shape.size()) return false;
  std::size_t i = 0;
  for (auto d : shape)
    if (t.shape()[i++] != d) return false;
  return true;
}

// Rows of x viewed as [rows, x.dim(-1)].
inline std::int64_t rows_of(const Tensor& x) {
  std::int64_t rows = 1;
  for (int d = 0; d + 1 < x.rank(); ++d) rows *= x.shape()[static_cast<std::size_t>(d)];
  return rows;
}

// ---------------------------------------------------------------------- losses and metrics

// Predictions viewed as rows of their last axis, grouped per example (as on the CPU).
struct RowLayout {
  std::int64_t examples = 0;     // N = pred.dim(0)
  std::int64_t rows = 0;         // rows of the last axis in all of pred
  std::int64_t width = 0;        // length of the last axis (classes)
  std::int64_t per_example = 0;  // rows per example
};

inline RowLayout class_rows(const Tensor& pred, Device device, const char* op) {
  require_float_on(pred, device, op, "pred");
  if (pred.rank() < 2)
    throw Error(fmt::format("{}: pred has shape {} but must be (batch, ..., classes)", op, shape_str(pred.shape())));
  RowLayout l;
  l.examples = pred.dim(0);
  l.width = pred.dim(-1);
  if (l.width == 0) throw Error(fmt::format("{}: pred {} has zero classes", op, shape_str(pred.shape())));
  l.rows = pred.numel() / l.width;
  l.per_example = l.examples == 0 ? 0 : l.rows / l.examples;
  return l;
}

inline RowLayout element_rows(const Tensor& pred, Device device, const char* op) {
  require_float_on(pred, device, op, "pred");
  if (pred.rank() < 1) throw Error(fmt::format("{}: pred is a scalar but must have a batch axis", op));
  RowLayout l;
  l.examples = pred.dim(0);
  l.rows = l.examples;
  l.width = l.examples == 0 ? 0 : pred.numel() / l.examples;
  l.per_example = 1;
  return l;
}

// Dense targets have pred's shape; a trailing axis of 1 on either side is tolerated, as Keras
// squeezes it ((N,) targets against (N, 1) predictions). Same element count either way.
inline void require_target(const Tensor& target, const Tensor& pred, Device device, const char* op) {
  require_float_on(target, device, op, "target");
  const Shape& a = target.shape();
  const Shape& b = pred.shape();
  auto drop_one = [](const Shape& s) { return (s.size() > 1 && s.back() == 1) ? Shape(s.begin(), s.end() - 1) : s; };
  bool ok = a == b || drop_one(a) == b || a == drop_one(b);
  if (!ok)
    throw Error(
        fmt::format("{}: target has shape {} but pred has shape {}; they must match", op, shape_str(a), shape_str(b)));
}

// Integer class labels on the GPU with one entry per row of pred viewed as [rows, classes].
inline int require_labels(const Tensor& labels, const Tensor& pred, std::int64_t rows, Device device,
                          const char* op) {
  require_on(labels, device, op, "labels");
  if (labels.dtype() == DType::float32)
    throw Error(
        fmt::format("{}: labels {} are float32 but must be integer class ids; cast them to int "
                    "(int32, int64 or uint8) first",
                    op, shape_str(labels.shape())));
  bool rows_match = labels.numel() == rows && labels.rank() >= 1 && labels.dim(0) == pred.dim(0);
  if (!rows_match)
    throw Error(
        fmt::format("{}: labels have shape {} but pred has shape {}; expected one class id per row, "
                    "shape ({},) or ({}, 1)",
                    op, shape_str(labels.shape()), shape_str(pred.shape()), rows, rows));
  switch (labels.dtype()) {
    case DType::int32:
      return kern::kLabelInt32;
    case DType::int64:
      return kern::kLabelInt64;
    case DType::uint8:
      return kern::kLabelUint8;
    default:
      throw Error(fmt::format("{}: labels are {} but must be int32, int64 or uint8", op, dtype_name(labels.dtype())));
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
  throw Error(
      fmt::format("{}: label {} at index {} is out of range for {} classes (pred shape {}); labels "
                  "must lie in [0, {}) — check the dataset or the layer's unit count",
                  op, value, index, classes, shape_str(pred.shape()), classes));
}

}  // namespace kerascpp::cuda::ops
