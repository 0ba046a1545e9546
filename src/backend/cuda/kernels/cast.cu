// Conversions between float32 and the 16-bit floats (round to nearest even), for Backend::cast.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "backend/cuda/kernels/common.cuh"

namespace kerascpp::cuda::kern {

namespace {

__device__ __forceinline__ float load(const void* p, FloatType t, std::int64_t i) {
  switch (t) {
    case kBfloat16:
      return __bfloat162float(static_cast<const __nv_bfloat16*>(p)[i]);
    case kFloat16:
      return __half2float(static_cast<const __half*>(p)[i]);
    default:
      return static_cast<const float*>(p)[i];
  }
}

__device__ __forceinline__ void store(void* p, FloatType t, std::int64_t i, float v) {
  switch (t) {
    case kBfloat16:
      static_cast<__nv_bfloat16*>(p)[i] = __float2bfloat16_rn(v);
      break;
    case kFloat16:
      static_cast<__half*>(p)[i] = __float2half_rn(v);
      break;
    default:
      static_cast<float*>(p)[i] = v;
  }
}

__global__ void cast_kernel(const void* x, FloatType from, void* y, FloatType to, std::int64_t n) {
  for (std::int64_t i = global_thread(); i < n; i += grid_threads()) store(y, to, i, load(x, from, i));
}

}  // namespace

void cast(const void* x, FloatType from, void* y, FloatType to, std::int64_t n, cudaStream_t stream) {
  if (n <= 0) return;
  cast_kernel<<<elementwise_blocks(n), kThreads, 0, stream>>>(x, from, y, to, n);
}

}  // namespace kerascpp::cuda::kern
