// Concatenation and split along an axis: the whole tensor is [outer, whole_row], part k is
// [outer, row_k] placed at column offset_k of every whole row. blockIdx.y picks the part.
#include "backend/cuda/kernels/common.cuh"

namespace kerascpp::cuda::kern {

namespace {

__global__ void concat_rows_kernel(ConcatParts parts, float* whole, std::int64_t outer, std::int64_t whole_row,
                                   bool to_whole) {
  const int k = blockIdx.y;
  float* part = parts.data[k];
  const std::int64_t row = parts.row[k];
  const std::int64_t offset = parts.offset[k];
  const std::int64_t n = outer * row;
  const bool narrow = n <= 0xffffffffLL;  // 32-bit division is several times cheaper
  for (std::int64_t i = global_thread(); i < n; i += grid_threads()) {
    const std::int64_t o =
        narrow ? static_cast<std::int64_t>(static_cast<std::uint32_t>(i) / static_cast<std::uint32_t>(row)) : i / row;
    const std::int64_t j = i - o * row;
    float* w = whole + o * whole_row + offset + j;
    if (to_whole) *w = part[i];
    else part[i] = *w;
  }
}

}  // namespace

void concat_rows(const ConcatParts& parts, float* whole, std::int64_t outer, std::int64_t whole_row, bool to_whole,
                 cudaStream_t stream) {
  if (parts.count <= 0 || outer <= 0) return;
  // Parts with no elements are dropped so every blockIdx.y has work to do.
  ConcatParts live{};
  std::int64_t largest = 0;
  for (int k = 0; k < parts.count && k < kMaxConcatParts; ++k) {
    if (parts.row[k] <= 0) continue;
    live.data[live.count] = parts.data[k];
    live.row[live.count] = parts.row[k];
    live.offset[live.count] = parts.offset[k];
    ++live.count;
    if (parts.row[k] > largest) largest = parts.row[k];
  }
  if (live.count == 0) return;
  dim3 grid(elementwise_blocks(outer * largest), static_cast<unsigned>(live.count));
  concat_rows_kernel<<<grid, kThreads, 0, stream>>>(live, whole, outer, whole_row, to_whole);
}

}  // namespace kerascpp::cuda::kern
