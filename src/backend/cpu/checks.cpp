#include "backend/cpu/checks.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace kerascpp::cpu {

void require_float(const Tensor& t, const char* op, const char* arg) {
  if (!t.defined()) throw Error(fmt::format("{}: `{}` is an undefined tensor; allocate it first", op, arg));
  if (t.device().kind != Device::Kind::cpu)
    throw Error(fmt::format("{}: `{}` lives on {} but this is the CPU backend; copy it to the host first", op, arg,
                            t.device().str()));
  if (t.dtype() != DType::float32)
    throw Error(fmt::format("{}: `{}` {} is {}, expected float32; cast it first", op, arg, shape_str(t.shape()),
                            dtype_name(t.dtype())));
}

void require_same_shape(const Tensor& t, const char* arg, const Tensor& ref, const char* ref_arg, const char* op) {
  if (t.shape() != ref.shape())
    throw Error(fmt::format("{}: `{}` has shape {} but `{}` has shape {}; they must match", op, arg,
                            shape_str(t.shape()), ref_arg, shape_str(ref.shape())));
}

void require_rank_at_least(const Tensor& t, int rank, const char* op, const char* arg) {
  if (t.rank() < rank)
    throw Error(fmt::format("{}: `{}` has shape {} but needs rank >= {}", op, arg, shape_str(t.shape()), rank));
}

void prepare_output(Tensor& t, const Shape& shape, const char* op, const char* arg) {
  if (!t.defined()) {
    t = Tensor(shape, DType::float32, Device{});
    return;
  }
  require_float(t, op, arg);
  if (t.shape() != shape)
    throw Error(fmt::format("{}: output `{}` has shape {} but the result has shape {}; allocate it as {}", op, arg,
                            shape_str(t.shape()), shape_str(shape), shape_str(shape)));
}

bool has_shape(const Tensor& t, std::initializer_list<std::int64_t> shape) {
  if (t.shape().size() != shape.size()) return false;
  std::size_t i = 0;
  for (auto d : shape)
    if (t.shape()[i++] != d) return false;
  return true;
}

void prepare_output(Tensor& t, std::initializer_list<std::int64_t> shape, const char* op, const char* arg) {
  if (t.defined() && t.dtype() == DType::float32 && t.device().kind == Device::Kind::cpu && has_shape(t, shape)) return;
  prepare_output(t, Shape(shape), op, arg);
}

void prepare_output_last(Tensor& t, const Shape& like, std::int64_t last, const char* op, const char* arg) {
  if (t.defined() && t.dtype() == DType::float32 && t.device().kind == Device::Kind::cpu &&
      t.shape().size() == like.size() && !like.empty() && t.shape().back() == last &&
      std::equal(like.begin(), like.end() - 1, t.shape().begin()))
    return;
  Shape shape = like;
  if (shape.empty())
    shape.push_back(last);
  else
    shape.back() = last;
  prepare_output(t, shape, op, arg);
}

void require_labels(const Tensor& labels, const Tensor& pred, std::int64_t rows, const char* op) {
  if (!labels.defined()) throw Error(fmt::format("{}: `labels` is an undefined tensor", op));
  if (labels.device().kind != Device::Kind::cpu)
    throw Error(fmt::format("{}: `labels` live on {}; copy them to the host first", op, labels.device().str()));
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
}

void check_label_range(const Tensor& labels, std::int64_t classes, const Tensor& pred, const char* op) {
  std::int64_t n = labels.numel();
  for (std::int64_t i = 0; i < n; ++i) {
    std::int64_t l = label_at(labels, i);
    if (l < 0 || l >= classes)
      throw Error(
          fmt::format("{}: label {} at index {} is out of range for {} classes (pred shape {}); labels "
                      "must lie in [0, {}) — check the dataset or the layer's unit count",
                      op, l, i, classes, shape_str(pred.shape()), classes));
  }
}

}  // namespace kerascpp::cpu
