// Metric helpers: sums over the batch in a fixed order; the caller divides after any
// cross-replica all-reduce. Accuracies of class rows are per example (averaged over the rows
// of one example), so the caller divides by the example count; the elementwise metrics
// (binary accuracy, absolute error) are sums over all elements, and the caller divides by
// the values per example as well, like Keras's mean over the last axis and then the batch.
#include <cmath>

#include "backend/cpu/cpu_backend.hpp"
#include "backend/cpu/loss_common.hpp"
#include "backend/cpu/parallel.hpp"

namespace kerascpp::cpu {

double CpuBackend::sparse_categorical_accuracy_sum(const Tensor& pred, const Tensor& labels) {
  enter();
  const char* op = "sparse_categorical_accuracy";
  RowLayout l = class_rows(pred, op);
  require_labels(labels, pred, l.rows, op);
  check_label_range(labels, l.width, pred, op);
  const float* pp = pred.data<float>();
  double total = 0.0;
  visit_labels(labels, [&](const auto* lab) {
    total = chunked_sum(l.examples, partials_, [&](std::int64_t b, std::int64_t e) {
      double s = 0.0;
      for (std::int64_t n = b; n < e; ++n) {
        std::int64_t hits = 0;
        for (std::int64_t r = n * l.per_example; r < (n + 1) * l.per_example; ++r)
          hits += argmax_row(pp + r * l.width, l.width) == static_cast<std::int64_t>(lab[r]);
        s += static_cast<double>(hits) / static_cast<double>(l.per_example);
      }
      return s;
    });
  });
  return total;
}

double CpuBackend::sparse_top_k_accuracy_sum(const Tensor& pred, const Tensor& labels, int k) {
  enter();
  const char* op = "sparse_top_k_categorical_accuracy";
  RowLayout l = class_rows(pred, op);
  require_labels(labels, pred, l.rows, op);
  check_label_range(labels, l.width, pred, op);
  const float* pp = pred.data<float>();
  double total = 0.0;
  visit_labels(labels, [&](const auto* lab) {
    total = chunked_sum(l.examples, partials_, [&](std::int64_t b, std::int64_t e) {
      double s = 0.0;
      for (std::int64_t n = b; n < e; ++n) {
        std::int64_t hits = 0;
        for (std::int64_t r = n * l.per_example; r < (n + 1) * l.per_example; ++r) {
          const float* row = pp + r * l.width;
          const float mine = row[static_cast<std::int64_t>(lab[r])];
          std::int64_t larger = 0;
          for (std::int64_t j = 0; j < l.width; ++j) larger += row[j] > mine;
          hits += !std::isnan(mine) && larger < k;
        }
        s += static_cast<double>(hits) / static_cast<double>(l.per_example);
      }
      return s;
    });
  });
  return total;
}

double CpuBackend::categorical_accuracy_sum(const Tensor& pred, const Tensor& target) {
  enter();
  const char* op = "categorical_accuracy";
  RowLayout l = class_rows(pred, op);
  require_float(target, op, "target");
  require_same_shape(target, "target", pred, "pred", op);
  const float* pp = pred.data<float>();
  const float* pt = target.data<float>();
  return chunked_sum(l.examples, partials_, [&](std::int64_t b, std::int64_t e) {
    double s = 0.0;
    for (std::int64_t n = b; n < e; ++n) {
      std::int64_t hits = 0;
      for (std::int64_t r = n * l.per_example; r < (n + 1) * l.per_example; ++r)
        hits += argmax_row(pp + r * l.width, l.width) == argmax_row(pt + r * l.width, l.width);
      s += static_cast<double>(hits) / static_cast<double>(l.per_example);
    }
    return s;
  });
}

double CpuBackend::binary_accuracy_sum(const Tensor& pred, const Tensor& target, float threshold) {
  enter();
  const char* op = "binary_accuracy";
  require_float(pred, op, "pred");
  require_target(target, pred, op);
  const float* pp = pred.data<float>();
  const float* pt = target.data<float>();
  return chunked_sum(pred.numel(), partials_, [&](std::int64_t b, std::int64_t e) {
    std::int64_t hits = 0;
    for (std::int64_t i = b; i < e; ++i) hits += (pp[i] > threshold ? 1.f : 0.f) == pt[i];
    return static_cast<double>(hits);
  });
}

double CpuBackend::absolute_error_sum(const Tensor& pred, const Tensor& target) {
  enter();
  const char* op = "absolute_error";
  require_float(pred, op, "pred");
  require_target(target, pred, op);
  const float* pp = pred.data<float>();
  const float* pt = target.data<float>();
  return chunked_sum(pred.numel(), partials_, [&](std::int64_t b, std::int64_t e) {
    double s = 0.0;
    for (std::int64_t i = b; i < e; ++i) s += std::fabs(static_cast<double>(pp[i]) - pt[i]);
    return s;
  });
}

double CpuBackend::sum(const Tensor& x) {
  enter();
  require_float(x, "sum", "x");
  const float* p = x.data<float>();
  return chunked_sum(x.numel(), partials_, [&](std::int64_t b, std::int64_t e) {
    double s = 0.0;
    for (std::int64_t i = b; i < e; ++i) s += p[i];
    return s;
  });
}

}  // namespace kerascpp::cpu
