// Dense algebra of the CUDA backend: the layer forward on cuBLASLt with the bias fused into the
// matmul epilogue, and general matmul on cublasSgemm.
//
// ReLU is not fused: cuBLASLt documents its RELU epilogues as max(x, 0), which (like fmaxf) turns
// NaN into 0 and would hide a diverged run; cuDNN's activation with CUDNN_PROPAGATE_NAN keeps it,
// as the CPU backend does.
//
// Row-major <-> column-major: cuBLAS is column-major, and a row-major [R, C] matrix is, read
// column-major, its transpose (C x R, leading dimension C). So a row-major product
// c = a · b is computed as the column-major product cᵀ = bᵀ · aᵀ, with the operands swapped
// and no data moved.
//
// Precision: float32 throughout, no TF32 (CUBLAS_COMPUTE_32F for cuBLASLt, CUBLAS_DEFAULT_MATH
// for cuBLAS), so results match the CPU backend to float32 rounding. Under a mixed precision
// policy (compute_dtype() float16, or bfloat16 on compute capability 8.0+; DnnState::gemm_dtype)
// the operands are rounded to 16 bits on the device and the product runs on cublasGemmEx with
// 16-bit A/B, float32 C and float32 accumulation (DnnState::gemm_16bit), as the CPU backend's
// 16-bit oneDNN matmuls do; dense_forward then adds the bias and activation in float32 as its
// cublasSgemm path does (no cuBLASLt plan: its bias epilogue's types for 16-bit A/B with a
// float32 D are not something this file relies on).
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

#include "backend/cuda/checks.hpp"
#include "backend/cuda/cuda_backend.hpp"
#include "backend/cuda/device_runtime.hpp"
#include "backend/cuda/dnn_state.hpp"
#include "backend/op_shapes.hpp"
#include "check.hpp"

namespace kerascpp::cuda {

namespace {

constexpr float kOne = 1.f, kZero = 0.f;
// cuBLASLt workspace: NVIDIA recommends 32 MiB on Hopper; never above the state's limit.
constexpr std::size_t kLtWorkspace = std::size_t{32} << 20;

// Shape checks and the [leading, last] view are shared with the CPU backend (backend/op_shapes.*).
using op_shapes::leading;
using op_shapes::require_rank_at_least;

// Alignment of a device pointer (a power of two up to 256 bytes). cuBLASLt's heuristics assume
// 256-byte aligned operands unless told otherwise, and a tensor that is a row slice of a batch
// may be aligned to as little as 4 bytes.
std::uint32_t alignment_of(const void* p) {
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  std::uint32_t al = 256;
  while (al > 4 && a % al != 0) al >>= 1;
  return al;
}

template <class T>
void set_desc(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr, const T& value) {
  KCPP_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, attr, &value, sizeof(value)));
}

template <class T>
void set_pref(cublasLtMatmulPreference_t pref, cublasLtMatmulPreferenceAttributes_t attr, const T& value) {
  KCPP_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, attr, &value, sizeof(value)));
}

// The cuBLASLt plan for y[rows, out] = x[rows, in] · w[in, out] (+ b), column-major:
// D (out x rows, ld out) = A (= w: out x in, ld out) · B (= x: in x rows, ld in). The bias is
// a vector over D's rows (= our columns), broadcast over D's columns (= our rows): exactly
// CUBLASLT_EPILOGUE_BIAS. The pointers only serve the heuristics' alignment checks.
std::unique_ptr<DensePlan> make_dense_plan(DnnState& d, std::int64_t rows, std::int64_t in, std::int64_t out, bool bias,
                                           const float* x, const float* w, const float* b, const float* y) {
  auto plan = std::make_unique<DensePlan>();
  KCPP_CUBLAS_CHECK(cublasLtMatmulDescCreate(&plan->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  set_desc(plan->desc, CUBLASLT_MATMUL_DESC_TRANSA, CUBLAS_OP_N);
  set_desc(plan->desc, CUBLASLT_MATMUL_DESC_TRANSB, CUBLAS_OP_N);
  const cublasLtEpilogue_t epilogue = bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
  set_desc(plan->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, epilogue);
  if (bias) {
    const void* bp = b;
    set_desc(plan->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, bp);
  }
  KCPP_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan->a, CUDA_R_32F, static_cast<std::uint64_t>(out),
                                               static_cast<std::uint64_t>(in), out));
  KCPP_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan->b, CUDA_R_32F, static_cast<std::uint64_t>(in),
                                               static_cast<std::uint64_t>(rows), in));
  KCPP_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan->d, CUDA_R_32F, static_cast<std::uint64_t>(out),
                                               static_cast<std::uint64_t>(rows), out));

  cublasLtMatmulPreference_t pref = nullptr;
  KCPP_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  cublasLtMatmulHeuristicResult_t results[8] = {};
  int returned = 0;
  cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
  const std::uint64_t max_ws = std::min(kLtWorkspace, d.workspace_limit);
  try {
    set_pref(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, max_ws);
    set_pref(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, alignment_of(w));
    set_pref(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, alignment_of(x));
    set_pref(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, alignment_of(y));
    set_pref(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, alignment_of(y));
    st = cublasLtMatmulAlgoGetHeuristic(d.lt, plan->desc, plan->a, plan->b, plan->d, plan->d, pref, 8, results,
                                        &returned);
  } catch (...) {
    cublasLtMatmulPreferenceDestroy(pref);
    throw;
  }
  cublasLtMatmulPreferenceDestroy(pref);
  // No heuristic (CUBLAS_STATUS_NOT_SUPPORTED) or no usable result: the cublasSgemm path.
  if (st == CUBLAS_STATUS_SUCCESS) {
    for (int i = 0; i < returned; ++i) {
      if (results[i].state != CUBLAS_STATUS_SUCCESS || results[i].workspaceSize > max_ws) continue;
      plan->lt = true;
      plan->algo = results[i].algo;
      plan->workspace_bytes = results[i].workspaceSize;
      plan->epilogue_bias = bias;
      break;
    }
  }
  return plan;
}

}  // namespace

void CudaBackend::dense_forward(const Tensor& x, const Tensor& w, const Tensor& b, const ActivationFn& act, Tensor& y) {
  DeviceGuard guard(device_);
  const char* op = "dense_forward";
  const Device dev = device();
  require_float_on(x, dev, op, "x");
  require_float_on(w, dev, op, "w");
  require_rank_at_least(x, 1, op, "x");
  op_shapes::check_dense_kernel(x, w, op);
  const std::int64_t rows = leading(x), in = w.dim(0), out = w.dim(1);
  const bool bias = b.defined();
  if (bias) {
    require_float_on(b, dev, op, "b");
    op_shapes::check_dense_bias(b, w, op);
  }
  Shape y_shape = x.shape();
  y_shape.back() = out;
  prepare_output_on(y, y_shape, dev, op, "y");
  if (rows == 0 || out == 0) return;

  DnnState& d = *dnn_;
  float* py = y.data<float>();
  const float* pb = bias ? b.data<float>() : nullptr;
  if (in == 0) {
    // An empty contraction: y = act(b) (or act(0)).
    d.zero(py, rows * out);
    if (bias) d.add_row_bias(pb, py, rows, out, op);
    d.activation_forward(act, py, py, rows, out, op);
    return;
  }

  const float* px = x.data<float>();
  const float* pw = w.data<float>();
  const DType cdt = d.gemm_dtype(compute_dtype());
  if (cdt != DType::float32) {
    // Column-major: y (out x rows) = w (out x in, ld out) · x (in x rows, ld in), 16-bit operands.
    d.gemm_16bit(cdt, CUBLAS_OP_N, CUBLAS_OP_N, out, rows, in, pw, in * out, out, 0, px, rows * in, in, 0, 0.f, py, out,
                 0, 1);
    if (bias) d.add_row_bias(pb, py, rows, out, op);
    if (act != ActivationKind::linear) d.activation_forward(act, py, py, rows, out, op);
    return;
  }
  // Plans are keyed by the problem, the fused epilogue and the operands' alignments (the
  // heuristics' choice depends on them).
  const std::array<std::int64_t, 8> key{
      rows, in, out, bias ? 1 : 0, alignment_of(px), alignment_of(pw), alignment_of(py), bias ? alignment_of(pb) : 0};
  auto& slot = d.dense_plans[key];
  if (!slot) slot = make_dense_plan(d, rows, in, out, bias, px, pw, pb, py);
  DensePlan& plan = *slot;

  if (plan.lt) {
    if (bias) {
      const void* bp = pb;
      set_desc(plan.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, bp);
    }
    void* ws = d.workspace(plan.workspace_bytes, op, "the cuBLASLt matmul");
    // beta = 0: C (= D = y) is not read, so a preallocated y may hold anything.
    KCPP_CUBLAS_CHECK(cublasLtMatmul(d.lt, plan.desc, &kOne, pw, plan.a, px, plan.b, &kZero, py, plan.d, py, plan.d,
                                     &plan.algo, ws, plan.workspace_bytes, d.stream));
  } else {
    // Column-major: y (out x rows) = w (out x in, ld out) · x (in x rows, ld in).
    KCPP_CUBLAS_CHECK(
        cublasSgemm_64(d.blas, CUBLAS_OP_N, CUBLAS_OP_N, out, rows, in, &kOne, pw, out, px, in, &kZero, py, out));
    if (bias) d.add_row_bias(pb, py, rows, out, op);
  }
  // The activation: relu/sigmoid/tanh (cuDNN activation, NaN-propagating) or softmax over each
  // row (cuDNN softmax).
  if (act != ActivationKind::linear) d.activation_forward(act, py, py, rows, out, op);
}

void CudaBackend::matmul(const Tensor& a, bool transpose_a, const Tensor& b, bool transpose_b, Tensor& c,
                         bool accumulate) {
  DeviceGuard guard(device_);
  const char* op = "matmul";
  const Device dev = device();
  require_float_on(a, dev, op, "a");
  require_float_on(b, dev, op, "b");
  require_rank_at_least(a, 1, op, "a");
  require_rank_at_least(b, 1, op, "b");
  const op_shapes::MatmulDims dims = op_shapes::matmul_dims(a, transpose_a, b, transpose_b, op);
  const std::int64_t M = dims.M, K = dims.K, N = dims.N;
  // An undefined c is allocated; it then counts as zeros, so "accumulate" into it overwrites.
  bool fresh = false;
  if (!c.defined()) {
    c = Tensor({M, N}, DType::float32, dev);
    fresh = true;
  } else {
    require_float_on(c, dev, op, "c");
    op_shapes::check_matmul_output(c, dims, op);
  }
  if (M == 0 || N == 0) return;
  DnnState& d = *dnn_;
  float* pc = c.data<float>();
  const bool add = accumulate && !fresh;
  if (K == 0) {
    if (!add) d.zero(pc, M * N);
    return;
  }
  // Row-major c[M,N] = op(a)·op(b) is column-major cᵀ (N x M, ld N) = op(b)ᵀ · op(a)ᵀ. Read
  // column-major, the stored b is bᵀ (ld b_cols): op(b)ᵀ is that as is when b is not transposed
  // and its transpose when it is; likewise for a (ld a_cols). beta = 0 does not read c.
  const float beta = add ? 1.f : 0.f;
  const std::int64_t a_cols = a.dim(-1), b_cols = b.dim(-1);
  const DType cdt = d.gemm_dtype(compute_dtype());
  if (cdt != DType::float32) {
    d.gemm_16bit(cdt, transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N, transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N, N, M, K,
                 b.data<float>(), b.numel(), b_cols, 0, a.data<float>(), a.numel(), a_cols, 0, beta, pc, N, 0, 1);
    return;
  }
  KCPP_CUBLAS_CHECK(cublasSgemm_64(d.blas, transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N,
                                   transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N, N, M, K, &kOne, b.data<float>(), b_cols,
                                   a.data<float>(), a_cols, &beta, pc, N));
}

// What a compute dtype runs as on this GPU (see DnnState::gemm_dtype): the matmuls (matmul,
// dense_forward, batched_matmul) on cublasGemmEx / cublasGemmStridedBatchedEx with 16-bit
// operands and float32 accumulation and output; the convolutions (conv2d and depthwise, all
// three passes) on cuDNN's pseudo-16-bit configuration, whose 16-bit output is cast back to
// float32, or in float32 for a problem cuDNN offers no 16-bit algorithm for (conv.cpp).
// bfloat16 before compute capability 8.0 computes in float32, and the string says so.
std::string CudaBackend::compute_path(DType dtype) {
  if (dtype == DType::float32) return "float32";
  KERASCPP_CHECK_VALUE(is_low_precision(dtype), "compute_path: {} is not a compute dtype (float32, bfloat16, float16)",
                       dtype_name(dtype));
  DeviceGuard guard(device_);
  const DnnState& d = *dnn_;
  if (d.gemm_dtype(dtype) == DType::float32)
    return fmt::format(
        "float32 (bfloat16 matmuls and convolutions need compute capability 8.0 or later; this GPU is {}.x)",
        d.cc_major);
  const char* name = dtype_name(dtype);
  return fmt::format(
      "cuBLAS GemmEx {0} inputs, float32 accumulate (also the 1x1 convolutions, conv_gemm.cpp); cuDNN {0} "
      "convolution (float32 compute, tensor-op math, {0} output cast to float32; float32 for a convolution cuDNN has "
      "no {0} algorithm for)",
      name);
}

}  // namespace kerascpp::cuda
