// Dense algebra on oneDNN matmul: the layer forward with fused bias and activation, general
// matmul with transposes expressed as strides, and the bias-gradient reduction.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "backend/cpu/add_rows.hpp"
#include "backend/cpu/checks.hpp"
#include "backend/cpu/cpu_backend.hpp"
#include "backend/cpu/dnnl_util.hpp"
#include "backend/cpu/low_precision_conversions.hpp"
#include "backend/cpu/nan_propagation.hpp"
#include "backend/cpu/parallel.hpp"
#include "check.hpp"
#include "simd_clones.hpp"

namespace kerascpp::cpu {

namespace {

struct MatmulEntry : CacheEntry {
  CachedPrimitive mm;
};

// Tensors of rank > 2 are read as [product of leading axes, last axis] (shared with the CUDA backend).
using op_shapes::leading;

// c[m, n] = op(a)·op(b) + beta·c, row-major, on oneDNN's sgemm (OpenMP threads as enter() set them).
void sgemm(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, const float* a, const float* b, float beta,
           float* c, const char* op) {
  const dnnl_status_t status =
      dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, 1.f, a, ta ? m : k, b, tb ? k : n, beta, c, n);
  KERASCPP_CHECK_DEVICE(status == dnnl_success, "{}: oneDNN's sgemm failed (status {}) on {}x{}x{}", op,
                        static_cast<int>(status), m, n, k);
}

// Rows [r0, r1) of y (width `out`) get the bias added after the product, as oneDNN's matmul adds
// it, then relu_keep_nan's ReLU while the row is still in L1: one pass over the product where
// bias_add and then the activation would stream it from memory twice.
KERASCPP_SIMD_CLONES void add_bias_relu_rows(float* __restrict y, const float* __restrict b, std::int64_t r0,
                                             std::int64_t r1, std::int64_t out) {
  for (std::int64_t r = r0; r < r1; ++r) {
    float* __restrict row = y + r * out;
#pragma omp simd
    for (std::int64_t j = 0; j < out; ++j) row[j] += b[j];
    relu_keep_nan_serial(row, out);
  }
}

}  // namespace

// Cloned: the baseline build converts and adds two doubles an instruction, and a convolution's
// bias gradient sums every output pixel (86k rows a step in the CNN at batch 128).
KERASCPP_SIMD_CLONES void add_rows(const float* __restrict x, std::int64_t r0, std::int64_t r1, std::int64_t C,
                                   double* __restrict acc) {
  for (std::int64_t r = r0; r < r1; ++r) {
    const float* __restrict row = x + r * C;
#pragma omp simd
    for (std::int64_t c = 0; c < C; ++c) acc[c] += row[c];
  }
}

void CpuBackend::dense_forward(const Tensor& x, const Tensor& w, const Tensor& b, const ActivationFn& act, Tensor& y) {
  enter();
  const char* op = "dense_forward";
  require_activation(x, op, "x");
  require_float(w, op, "w");
  require_rank_at_least(x, 1, op, "x");
  op_shapes::check_dense_kernel(x, w, op);
  const std::int64_t rows = leading(x), in = w.dim(0), out = w.dim(1);
  const bool bias = b.defined();
  if (bias) {
    require_float(b, op, "b");
    op_shapes::check_dense_bias(b, w, op);
  }
  if (y.defined() && y.dtype() != DType::float32) {
    Shape y_shape = x.shape();
    y_shape.back() = out;
    prepare_activation(y, y_shape, y.dtype(), op, "y");
  } else {
    prepare_output_last(y, x.shape(), out, op, "y");
  }
  if (rows == 0 || out == 0) return;
  if (in == 0 && y.dtype() != DType::float32) {  // rare enough to go through float32
    Tensor wide;
    dense_forward(x, w, b, act, wide);
    cast(wide, y.dtype(), y);
    return;
  }
  if (in == 0) {
    // An empty contraction: y = act(b) (or act(0)).
    float* py = y.data<float>();
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t j = 0; j < out; ++j) py[r * out + j] = bias ? b.data<float>()[j] : 0.f;
    activation_forward(act, y, y);
    return;
  }

  fit_threads(rows * in * out, kSerialMacs);
  const ComputeOperands operands = compute_operands(x, w);
  if (operands.dt == dnnl::memory::data_type::f32 && y.dtype() == DType::float32 && rows * in * out >= sgemm_macs_) {
    float* py = y.data<float>();
    sgemm(false, false, rows, out, in, static_cast<const float*>(operands.a), static_cast<const float*>(operands.b),
          0.f, py, op);
    if (bias && act == ActivationKind::relu) {
      const float* pb = b.data<float>();
      parallel_for(rows, std::max<std::int64_t>(1, kElementGrain / out),
                   [&](std::int64_t r0, std::int64_t r1) { add_bias_relu_rows(py, pb, r0, r1, out); });
      return;
    }
    if (bias) bias_add(y, b);
    if (fused_post_op(act)) activation_forward(act, y, y);
    else unfused_activation(act, y, rows, out, op);
    return;
  }
  cache_.key("dense");
  cache_.append(rows, in, out, bias, post_op_key(act), static_cast<int>(operands.dt), static_cast<int>(y.dtype()));
  auto& e = cache_.get<MatmulEntry>([&] {
    return guarded_build(op, cache_.current_key(), [&] {
      auto attr = base_attr();
      if (fused_post_op(act)) {
        dnnl::post_ops po;
        append_post_op(po, act);
        attr.set_post_ops(po);
      }
      auto src = typed_md({rows, in}, operands.dt, tag::ab);
      auto wei = typed_md({in, out}, operands.dt, tag::ab);
      auto dst = typed_md({rows, out}, dnnl_type_of(y.dtype()), tag::ab);
      dnnl::matmul::desc d =
          bias ? dnnl::matmul::desc(src, wei, f32_md({1, out}, tag::ab), dst) : dnnl::matmul::desc(src, wei, dst);
      dnnl::matmul::primitive_desc pd(d, attr, engine_);
      auto entry = std::make_unique<MatmulEntry>();
      entry->mm = bias ? make_primitive(pd, {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_BIAS, DNNL_ARG_DST})
                       : make_primitive(pd, {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST});
      return entry;
    });
  });
  e.mm.bind(DNNL_ARG_SRC, operands.a);
  e.mm.bind(DNNL_ARG_WEIGHTS, operands.b);
  if (bias) e.mm.bind(DNNL_ARG_BIAS, b.raw());
  e.mm.bind(DNNL_ARG_DST, y.raw());
  run(e.mm);
  unfused_activation(act, y, rows, out, op);
}

void CpuBackend::matmul(const Tensor& a, bool transpose_a, const Tensor& b, bool transpose_b, Tensor& c,
                        bool accumulate) {
  enter();
  const char* op = "matmul";
  require_activation(a, op, "a");
  require_activation(b, op, "b");
  require_rank_at_least(a, 1, op, "a");
  require_rank_at_least(b, 1, op, "b");
  const op_shapes::MatmulDims dims = op_shapes::matmul_dims(a, transpose_a, b, transpose_b, op);
  const std::int64_t M = dims.M, K = dims.K, N = dims.N;
  if (!c.defined()) {
    c = Tensor::zeros({M, N}, DType::float32, Device{});
  } else {
    require_activation(c, op, "c");
    op_shapes::check_matmul_output(c, dims, op);
  }
  if (M == 0 || N == 0) return;
  if (K == 0) {
    if (!accumulate) std::memset(c.raw(), 0, c.nbytes());
    return;
  }
  fit_threads(M * N * K, kSerialMacs);
  const ComputeOperands operands = compute_operands(a, b);
  if (operands.dt == dnnl::memory::data_type::f32 && c.dtype() == DType::float32 && M * N * K >= sgemm_macs_) {
    sgemm(transpose_a, transpose_b, M, N, K, static_cast<const float*>(operands.a),
          static_cast<const float*>(operands.b), accumulate ? 1.f : 0.f, c.data<float>(), op);
    return;
  }

  cache_.key("matmul");
  cache_.append(M, K, N, transpose_a, transpose_b, accumulate, static_cast<int>(operands.dt),
                static_cast<int>(c.dtype()));
  auto& e = cache_.get<MatmulEntry>([&] {
    return guarded_build(op, cache_.current_key(), [&] {
      auto attr = base_attr();
      if (accumulate) {
        dnnl::post_ops po;
        po.append_sum(1.f);
        attr.set_post_ops(po);
      }
      // A transposed operand is the same buffer read with swapped strides.
      const auto dt = operands.dt;
      auto src = transpose_a ? typed_strided_md({M, K}, dt, {1, M}) : typed_md({M, K}, dt, tag::ab);
      auto wei = transpose_b ? typed_strided_md({K, N}, dt, {1, K}) : typed_md({K, N}, dt, tag::ab);
      auto dst = typed_md({M, N}, dnnl_type_of(c.dtype()), tag::ab);
      dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src, wei, dst), attr, engine_);
      auto entry = std::make_unique<MatmulEntry>();
      entry->mm = make_primitive(pd, {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST});
      return entry;
    });
  });
  e.mm.bind(DNNL_ARG_SRC, operands.a);
  e.mm.bind(DNNL_ARG_WEIGHTS, operands.b);
  e.mm.bind(DNNL_ARG_DST, c.raw());
  run(e.mm);
}

void CpuBackend::sum_to_last_axis(const Tensor& x, Tensor& out, bool accumulate) {
  enter();
  const char* op = "sum_to_last_axis";
  require_activation(x, op, "x");
  require_rank_at_least(x, 1, op, "x");
  const std::int64_t C = x.dim(-1), rows = leading(x);
  if (!out.defined()) out = Tensor::zeros({C}, DType::float32, Device{});
  prepare_output(out, {C}, op, "out");
  row_sums(x.raw(), x.dtype(), rows, C, out.data<float>(), accumulate);
}

void CpuBackend::row_sums(const void* x, DType dtype, std::int64_t rows, std::int64_t C, float* out, bool accumulate) {
  sums_.resize(static_cast<std::size_t>(C));
  if (dtype == DType::float32) {
    const auto* px = static_cast<const float*>(x);
    chunked_row_sums(rows, C, C, partials_, sums_.data(),
                     [&](std::int64_t r0, std::int64_t r1, double* acc) { add_rows(px, r0, r1, C, acc); });
  } else {  // 16-bit rows (a mixed-precision bias gradient), widened a tile at a time
    const auto* px = static_cast<const std::uint16_t*>(x);
    chunked_row_sums(rows, C, C, partials_, sums_.data(), [&](std::int64_t r0, std::int64_t r1, double* acc) {
      constexpr std::int64_t kTile = 256;
      float tile[kTile];
      for (std::int64_t r = r0; r < r1; ++r)
        for (std::int64_t c0 = 0; c0 < C; c0 += kTile) {
          const std::int64_t m = std::min(kTile, C - c0);
          widen_floats(px + r * C + c0, dtype, tile, m);
          add_rows(tile, 0, 1, m, acc + c0);
        }
    });
  }
  for (std::int64_t c = 0; c < C; ++c)
    out[c] = accumulate ? static_cast<float>(out[c] + sums_[c]) : static_cast<float>(sums_[c]);
}

}  // namespace kerascpp::cpu
