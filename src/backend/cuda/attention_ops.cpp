// CudaBackend's attention ops: batched matmul on cuBLAS (strided batched SGEMM, the same
// row-major trick as matmul in dense.cpp; cublasGemmStridedBatchedEx with 16-bit operands
// under a mixed precision policy), and the permutation and masking kernels of
// kernels/attention.cu.
#include "backend/cuda/dnn_state.hpp"
#include "backend/cuda/kernel_common.hpp"
#include "check.hpp"

namespace kerascpp::cuda {

namespace {
constexpr float kOneF = 1.f;
}  // namespace

void CudaBackend::batched_matmul(const Tensor& a, bool transpose_a, const Tensor& b, bool transpose_b, Tensor& c,
                                 bool accumulate) {
  DeviceGuard guard(device_);
  const char* op = "batched_matmul";
  const Device dev = device();
  require_float_on(a, dev, op, "a");
  require_float_on(b, dev, op, "b");
  const op_shapes::BatchedMatmulDims d = op_shapes::batched_matmul_dims(a, transpose_a, b, transpose_b, op);
  const std::int64_t B = d.B, M = d.M, K = d.K, N = d.N;
  bool fresh = false;
  if (!c.defined()) {
    c = Tensor({B, M, N}, DType::float32, dev);
    fresh = true;
  } else {
    require_float_on(c, dev, op, "c");
    op_shapes::require_output_shape(c, {B, M, N}, op, "c");
  }
  if (B == 0 || M == 0 || N == 0) return;
  DnnState& s = *dnn_;
  const bool add = accumulate && !fresh;
  if (K == 0) {
    if (!add) s.zero(c.data<float>(), B * M * N);
    return;
  }
  // Per slice, row-major c = op(a)·op(b) is column-major cᵀ = op(b)ᵀ·op(a)ᵀ (see matmul).
  const float beta = add ? 1.f : 0.f;
  const std::int64_t a_cols = a.dim(2), b_cols = b.dim(2);
  const DType cdt = s.gemm_dtype(compute_dtype());
  if (cdt != DType::float32) {
    // Mixed precision: 16-bit operands, float32 c and accumulation (DnnState::gemm_16bit).
    s.gemm_16bit(cdt, transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N, transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N, N, M, K,
                 b.data<float>(), b.numel(), b_cols, b.dim(1) * b_cols, a.data<float>(), a.numel(), a_cols,
                 a.dim(1) * a_cols, beta, c.data<float>(), N, M * N, B);
    return;
  }
  KCPP_CUBLAS_CHECK(cublasSgemmStridedBatched_64(s.blas, transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N,
                                                 transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N, N, M, K, &kOneF,
                                                 b.data<float>(), b_cols, b.dim(1) * b_cols, a.data<float>(), a_cols,
                                                 a.dim(1) * a_cols, &beta, c.data<float>(), N, M * N, B));
}

void CudaBackend::transpose(const Tensor& x, const std::vector<int>& perm, Tensor& y) {
  DeviceGuard guard(device_);
  const char* op = "transpose";
  require_float_on(x, device(), op, "x");
  const Shape out = op_shapes::transposed_shape(x, perm, op);
  prepare_output_on(y, out, device(), op, "y");
  if (x.numel() == 0) return;
  kern::Permutation p{};
  p.rank = x.rank();
  std::int64_t stride = 1;
  std::int64_t x_strides[6] = {};
  for (int i = x.rank() - 1; i >= 0; --i) {
    x_strides[i] = stride;
    stride *= x.dim(i);
  }
  for (int i = 0; i < p.rank; ++i) {
    p.out_dims[i] = out[static_cast<std::size_t>(i)];
    p.in_strides[i] = x_strides[perm[static_cast<std::size_t>(i)]];
  }
  kern::transpose(x.data<float>(), y.data<float>(), x.numel(), p, stream_);
  KCPP_CUDA_CHECK(cudaGetLastError());
}

void CudaBackend::masked_fill(Tensor& x, const Tensor& mask, float value) {
  DeviceGuard guard(device_);
  const char* op = "masked_fill";
  require_float_on(x, device(), op, "x");
  KERASCPP_CHECK_DEVICE(mask.device() == device(), "{}: mask is on {} but this backend computes on {}", op,
                        mask.device().str(), device().str());
  const op_shapes::MaskedFillDims d = op_shapes::masked_fill_dims(x, mask, op);
  kern::masked_fill(x.data<float>(), static_cast<const std::uint8_t*>(mask.raw()), d.B, d.G, d.L, value, stream_);
  KCPP_CUDA_CHECK(cudaGetLastError());
}

void CudaBackend::mask_and(const Tensor& a, const Tensor& b, Tensor& out) {
  DeviceGuard guard(device_);
  const char* op = "mask_and";
  KERASCPP_CHECK_DEVICE(a.device() == device() && b.device() == device(), "{}: masks must be on {}", op,
                        device().str());
  op_shapes::check_mask_pair(a, b, op);
  if (!out.defined()) out = Tensor(a.shape(), DType::uint8, device());
  op_shapes::check_mask_pair(a, out, op);
  kern::mask_and(static_cast<const std::uint8_t*>(a.raw()), static_cast<const std::uint8_t*>(b.raw()),
                 static_cast<std::uint8_t*>(out.raw()), a.numel(), stream_);
  KCPP_CUDA_CHECK(cudaGetLastError());
}

void CudaBackend::mask_not_equal(const Tensor& x, float value, Tensor& mask) {
  DeviceGuard guard(device_);
  const char* op = "mask_not_equal";
  require_float_on(x, device(), op, "x");
  const std::int64_t K = op_shapes::prepare_mask_not_equal(x, mask, device(), op);
  kern::mask_not_equal(x.data<float>(), value, static_cast<std::uint8_t*>(mask.raw()), mask.numel(), K, stream_);
  KCPP_CUDA_CHECK(cudaGetLastError());
}

void CudaBackend::attention_mask(const Tensor& query_mask, const Tensor& value_mask, const Tensor& explicit_mask,
                                 bool causal, Tensor& out) {
  DeviceGuard guard(device_);
  const char* op = "attention_mask";
  for (const Tensor* m : {&query_mask, &value_mask, &explicit_mask, static_cast<const Tensor*>(&out)})
    KERASCPP_CHECK_DEVICE(!m->defined() || m->device() == device(), "{}: masks must be on {}", op, device().str());
  op_shapes::check_attention_masks(query_mask, value_mask, explicit_mask, out, op);
  auto u8 = [](const Tensor& t) { return t.defined() ? static_cast<const std::uint8_t*>(t.raw()) : nullptr; };
  kern::attention_mask(u8(query_mask), u8(value_mask), u8(explicit_mask), causal, static_cast<std::uint8_t*>(out.raw()),
                       out.dim(0), out.dim(1), out.dim(2), stream_);
  KCPP_CUDA_CHECK(cudaGetLastError());
}

}  // namespace kerascpp::cuda
