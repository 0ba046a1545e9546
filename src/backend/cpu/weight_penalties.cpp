// Regularizer penalties and MaxNorm on the CPU. The penalty is a chunked double sum (the same
// value for any thread count); the gradient and the rescaling are elementwise.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "backend/cpu/checks.hpp"
#include "backend/cpu/cpu_backend.hpp"
#include "backend/cpu/parallel.hpp"
#include "check.hpp"

namespace kerascpp::cpu {

double CpuBackend::weight_penalty(const Tensor& w, float l1, float l2, Tensor& grad, float grad_scale) {
  enter();
  const char* op = "weight_penalty";
  require_float(w, op, "w");
  const float* pw = w.data<float>();
  const double a = l1, b = l2;
  double penalty = chunked_sum(w.numel(), partials_, [&](std::int64_t begin, std::int64_t end) {
    double abs_sum = 0.0, square_sum = 0.0;
    for (std::int64_t i = begin; i < end; ++i) {
      const double v = pw[i];
      abs_sum += std::fabs(v);
      square_sum += v * v;
    }
    return a * abs_sum + b * square_sum;
  });
  if (grad.defined()) {
    require_float(grad, op, "grad");
    require_same_shape(grad, "grad", w, "w", op);
    float* pg = grad.data<float>();
    const float two_l2 = 2.f * l2;
    parallel_for(w.numel(), kElementGrain, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t i = begin; i < end; ++i) {
        const float v = pw[i];
        const float sign = v > 0.f ? 1.f : (v < 0.f ? -1.f : 0.f);
        pg[i] += grad_scale * (l1 * sign + two_l2 * v);  // grad_scale 1: the unscaled bits
      }
    });
  }
  return penalty;
}

void CpuBackend::max_norm(Tensor& w, std::int64_t rows, float max_value) {
  enter();
  require_float(w, "max_norm", "w");
  KERASCPP_CHECK_SHAPE(rows > 0 && w.numel() % rows == 0,
                       "max_norm: {} rows do not divide the {} elements of a {} tensor", rows, w.numel(),
                       shape_str(w.shape()));
  const std::int64_t cols = w.numel() / rows;
  float* p = w.data<float>();
  parallel_for(cols, 64, [&](std::int64_t c0, std::int64_t c1) {
    for (std::int64_t c = c0; c < c1; ++c) {
      double sq = 0.0;
      for (std::int64_t r = 0; r < rows; ++r) sq += static_cast<double>(p[r * cols + c]) * p[r * cols + c];
      const float norm = static_cast<float>(std::sqrt(sq));
      const float factor = std::clamp(norm, 0.f, max_value) / (1e-7f + norm);
      for (std::int64_t r = 0; r < rows; ++r) p[r * cols + c] *= factor;
    }
  });
}

}  // namespace kerascpp::cpu
