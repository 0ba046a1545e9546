#include "backend/cpu/checks.hpp"
#include "check.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace kerascpp::cpu {

void require_float(const Tensor& t, const char* op, const char* arg) {
  KERASCPP_CHECK_STATE(t.defined(), "{}: `{}` is an undefined tensor; allocate it first", op, arg);
  KERASCPP_CHECK_DEVICE(t.device().kind == Device::Kind::cpu,
                        "{}: `{}` lives on {} but this is the CPU backend; copy it to the host first", op, arg,
                        t.device().str());
  KERASCPP_CHECK_SHAPE(t.dtype() == DType::float32, "{}: `{}` {} is {}, expected float32; cast it first", op, arg,
                       shape_str(t.shape()), dtype_name(t.dtype()));
}

void require_same_dtype(const Tensor& a, const char* a_name, const Tensor& b, const char* b_name, const char* op,
                        const char* what) {
  KERASCPP_CHECK_SHAPE(a.dtype() == b.dtype(), "{}: `{}` is {} but `{}` is {}; {}", op, a_name, dtype_name(a.dtype()),
                       b_name, dtype_name(b.dtype()), what);
}

void prepare_output(Tensor& t, const Shape& shape, const char* op, const char* arg) {
  if (!t.defined()) {
    t = Tensor(shape, DType::float32, Device{});
    return;
  }
  require_float(t, op, arg);
  op_shapes::require_output_shape(t, shape, op, arg);
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
  if (shape.empty()) shape.push_back(last);
  else shape.back() = last;
  prepare_output(t, shape, op, arg);
}

void require_labels(const Tensor& labels, const Tensor& pred, std::int64_t rows, const char* op) {
  KERASCPP_CHECK_STATE(labels.defined(), "{}: `labels` is an undefined tensor", op);
  KERASCPP_CHECK_DEVICE(labels.device().kind == Device::Kind::cpu,
                        "{}: `labels` live on {}; copy them to the host first", op, labels.device().str());
  op_shapes::check_labels(labels, pred, rows, op);
}

void check_label_range(const Tensor& labels, std::int64_t classes, const Tensor& pred, const char* op) {
  std::int64_t n = labels.numel();
  for (std::int64_t i = 0; i < n; ++i) {
    std::int64_t l = label_at(labels, i);
    if (l < 0 || l >= classes) op_shapes::throw_label_out_of_range(l, i, classes, pred, op);
  }
}

}  // namespace kerascpp::cpu
