// Rows scaled to unit L2 norm (Dot(normalize=True), Keras' ops.normalize(order=2)): a loop per row,
// since oneDNN has no L2-normalization primitive.
#include <fmt/format.h>

#include <cmath>

#include "backend/cpu/checks.hpp"
#include "backend/cpu/cpu_backend.hpp"
#include "backend/cpu/parallel.hpp"
#include "backend/l2_normalize_rows.hpp"
#include "check.hpp"

namespace kerascpp::cpu {

void CpuBackend::l2_normalize_rows(const Tensor& x, Tensor& y, Tensor& inv) {
  enter();
  const char* op = "l2_normalize_rows";
  require_float(x, op, "x");
  KERASCPP_CHECK_SHAPE(x.rank() == 2, "{}: x must be [rows, features], got {}", op, shape_str(x.shape()));
  const std::int64_t rows = x.dim(0), cols = x.dim(1);
  prepare_output(y, x.shape(), op, "y");
  prepare_output(inv, {rows}, op, "inv");
  const float* px = x.data<float>();
  float* py = y.data<float>();
  float* pinv = inv.data<float>();
  parallel_for(rows, 1, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t r = b; r < e; ++r) {
      const float* xr = px + r * cols;
      double squares = 0.0;
      for (std::int64_t k = 0; k < cols; ++k) squares += static_cast<double>(xr[k]) * xr[k];
      const float f = op_shapes::l2_normalize_factor(static_cast<float>(squares));
      pinv[r] = f;
      for (std::int64_t k = 0; k < cols; ++k) py[r * cols + k] = xr[k] * f;
    }
  });
}

void CpuBackend::l2_normalize_rows_backward(const Tensor& y, const Tensor& dy, const Tensor& inv, Tensor& dx) {
  enter();
  const char* op = "l2_normalize_rows_backward";
  require_float(y, op, "y");
  require_float(dy, op, "dy");
  require_float(inv, op, "inv");
  KERASCPP_CHECK_SHAPE(y.rank() == 2 && dy.shape() == y.shape() && inv.numel() == y.dim(0),
                       "{}: y {} and dy {} must be the same [rows, features], inv [rows], got inv {}", op,
                       shape_str(y.shape()), shape_str(dy.shape()), shape_str(inv.shape()));
  const std::int64_t rows = y.dim(0), cols = y.dim(1);
  prepare_output(dx, y.shape(), op, "dx");
  const float* py = y.data<float>();
  const float* pdy = dy.data<float>();
  const float* pinv = inv.data<float>();
  float* pdx = dx.data<float>();
  parallel_for(rows, 1, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t r = b; r < e; ++r) {
      const float* yr = py + r * cols;
      const float* dyr = pdy + r * cols;
      double dot = 0.0;
      for (std::int64_t k = 0; k < cols; ++k) dot += static_cast<double>(dyr[k]) * yr[k];
      // A clamped factor (a zero row) is a constant: only its scaling flows back.
      const float d = op_shapes::l2_normalize_clamped(pinv[r]) ? 0.f : static_cast<float>(dot);
      for (std::int64_t k = 0; k < cols; ++k) pdx[r * cols + k] = pinv[r] * (dyr[k] - yr[k] * d);
    }
  });
}

}  // namespace kerascpp::cpu
