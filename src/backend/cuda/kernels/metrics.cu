// Accuracy tallies: integer hit counts added with integer atomics (exact, so the result does
// not depend on the order blocks finish in). Argmax follows the CPU backend's sequential scan
// (first index of the maximum; a NaN first element wins, other NaNs are never picked).
#include "backend/cuda/kernels/common.cuh"

namespace kerascpp::cuda::kern {

namespace {

constexpr std::int64_t kNoIndex = 0x7fffffffffffffffLL;

// The CPU's `best = 0; for j: if (row[j] > row[best]) best = j;` computed by one warp: with a
// non-NaN row[0] that is the first index of the largest non-NaN value.
__device__ std::int64_t warp_argmax(const float* row, std::int64_t n, int lane) {
  float best = 0.f;
  std::int64_t idx = kNoIndex;
  for (std::int64_t j = lane; j < n; j += 32) {
    const float v = row[j];
    if (!isnan(v) && (idx == kNoIndex || v > best)) {
      best = v;
      idx = j;
    }
  }
  // (value, index) under "larger value, then smaller index" is a total order, so the butterfly
  // leaves the same winner in every lane.
  for (int o = 16; o > 0; o >>= 1) {
    const float ob = __shfl_xor_sync(kFullMask, best, o);
    const std::int64_t oi = __shfl_xor_sync(kFullMask, idx, o);
    if (oi != kNoIndex && (idx == kNoIndex || ob > best || (ob == best && oi < idx))) {
      best = ob;
      idx = oi;
    }
  }
  if (isnan(row[0]) || idx == kNoIndex) return 0;
  return idx;
}

// One warp per row; one atomic per block.
__global__ void class_accuracy_kernel(const float* pred, const float* target, const void* labels, int label_type,
                                      std::int64_t rows, std::int64_t classes, Status* status) {
  __shared__ unsigned int block_hits;
  if (threadIdx.x == 0) block_hits = 0;
  __syncthreads();
  const int lane = threadIdx.x & 31;
  const std::int64_t r = static_cast<std::int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32;
  if (r < rows) {  // uniform over the warp
    const std::int64_t got = warp_argmax(pred + r * classes, classes, lane);
    std::int64_t want;
    bool valid = true;
    if (labels) {
      want = load_label(labels, label_type, r);
      if (want < 0 || want >= classes) {
        valid = false;
        if (lane == 0) atomicMin(&status->bad_row, static_cast<unsigned long long>(r));
      }
    } else {
      want = warp_argmax(target + r * classes, classes, lane);
    }
    if (lane == 0 && valid && got == want) atomicAdd(&block_hits, 1u);
  }
  __syncthreads();
  if (threadIdx.x == 0 && block_hits != 0) atomicAdd(&status->count, static_cast<unsigned long long>(block_hits));
}

__global__ void binary_accuracy_kernel(const float* pred, const float* target, std::int64_t n, float threshold,
                                       Status* status) {
  __shared__ unsigned long long warp_hits[kWarpsPerBlock];
  unsigned long long hits = 0;
  for (std::int64_t i = global_thread(); i < n; i += grid_threads())
    hits += (pred[i] > threshold ? 1.f : 0.f) == target[i] ? 1ull : 0ull;
  hits = warp_sum_u64(hits);
  if ((threadIdx.x & 31) == 0) warp_hits[threadIdx.x / 32] = hits;
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned long long total = 0;
    for (int w = 0; w < kWarpsPerBlock; ++w) total += warp_hits[w];
    if (total != 0) atomicAdd(&status->count, total);
  }
}

}  // namespace

void class_accuracy_hits(const float* pred, const float* target, const void* labels, int label_type, std::int64_t rows,
                         std::int64_t classes, Status* status, cudaStream_t stream) {
  if (rows <= 0 || classes <= 0) return;
  const std::int64_t blocks = (rows + kWarpsPerBlock - 1) / kWarpsPerBlock;
  class_accuracy_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(pred, target, labels, label_type, rows,
                                                                                classes, status);
}

namespace {
// One warp per row: the lanes count the scores larger than the label's; one atomic per block.
__global__ void top_k_kernel(const float* pred, const void* labels, int label_type, std::int64_t rows,
                             std::int64_t classes, int k, Status* status) {
  __shared__ unsigned int block_hits;
  if (threadIdx.x == 0) block_hits = 0;
  __syncthreads();
  const int lane = threadIdx.x & 31;
  const std::int64_t r = static_cast<std::int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32;
  if (r < rows) {  // uniform over the warp
    const std::int64_t want = load_label(labels, label_type, r);
    if (want < 0 || want >= classes) {
      if (lane == 0) atomicMin(&status->bad_row, static_cast<unsigned long long>(r));
    } else {
      const float* row = pred + r * classes;
      const float mine = row[want];
      unsigned long long larger = 0;
      for (std::int64_t j = lane; j < classes; j += 32) larger += row[j] > mine ? 1ull : 0ull;
      larger = warp_sum_u64(larger);
      if (lane == 0 && !isnan(mine) && larger < static_cast<unsigned long long>(k)) atomicAdd(&block_hits, 1u);
    }
  }
  __syncthreads();
  if (threadIdx.x == 0 && block_hits != 0) atomicAdd(&status->count, static_cast<unsigned long long>(block_hits));
}
}  // namespace

void top_k_hits(const float* pred, const void* labels, int label_type, std::int64_t rows, std::int64_t classes, int k,
                Status* status, cudaStream_t stream) {
  if (rows <= 0 || classes <= 0) return;
  const std::int64_t blocks = (rows + kWarpsPerBlock - 1) / kWarpsPerBlock;
  top_k_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(pred, labels, label_type, rows, classes, k,
                                                                       status);
}

void binary_accuracy_hits(const float* pred, const float* target, std::int64_t n, float threshold, Status* status,
                          cudaStream_t stream) {
  if (n <= 0) return;
  binary_accuracy_kernel<<<elementwise_blocks(n), kThreads, 0, stream>>>(pred, target, n, threshold, status);
}

namespace {

// backend/confusion.hpp's even_bucket, with the product rounded as Keras' float32 one.
__device__ __forceinline__ int even_bucket(float p, int num_thresholds) {
  if (!(p > 0.f)) return 1;  // NaN too
  const float clipped = p > 1.f ? 1.f : p;
  const int k = static_cast<int>(ceilf(__fmul_rn(clipped, static_cast<float>(num_thresholds - 1)))) - 1;
  return (k < 0 ? 0 : k) + 1;
}

// One global atomic per element: the buckets are few and the counts exact whatever the order.
__global__ void confusion_histogram_kernel(const float* pred, const float* target, std::int64_t count,
                                           std::int64_t stride, std::int64_t offset, const float* thresholds,
                                           int num_thresholds, bool even, unsigned long long* hist) {
  for (std::int64_t k = global_thread(); k < count; k += grid_threads()) {
    const std::int64_t i = offset + k * stride;
    const float p = pred[i];
    int bucket;
    if (even) {
      bucket = even_bucket(p, num_thresholds);
    } else {
      int lo = 0, hi = num_thresholds;  // lower_bound: thresholds strictly below p
      while (lo < hi) {
        const int mid = (lo + hi) / 2;
        if (thresholds[mid] < p) lo = mid + 1;
        else hi = mid;
      }
      bucket = lo;
    }
    atomicAdd(&hist[(target[i] != 0.f ? 0 : num_thresholds + 1) + bucket], 1ull);
  }
}

}  // namespace

void confusion_histogram(const float* pred, const float* target, std::int64_t count, std::int64_t stride,
                         std::int64_t offset, const float* thresholds, int num_thresholds, bool even,
                         unsigned long long* hist, cudaStream_t stream) {
  cudaMemsetAsync(hist, 0, 2 * (static_cast<std::size_t>(num_thresholds) + 1) * sizeof(unsigned long long), stream);
  if (count <= 0) return;
  confusion_histogram_kernel<<<elementwise_blocks(count), kThreads, 0, stream>>>(
      pred, target, count, stride, offset, thresholds, num_thresholds, even, hist);
}

}  // namespace kerascpp::cuda::kern
