// Embedding kernels: a grid-stride gather of table rows by id (out-of-range ids lower
// status->bad_row to their position and write zeros), and a deterministic scatter-add: one
// thread per table column walks the positions in index order, so every table element adds its
// contributions in the same order as the CPU backend (no float atomics). The scatter's
// parallelism is the row width D; enough for embedding widths of 64 and more.
#include "backend/cuda/kernels/common.cuh"

namespace kerascpp::cuda::kern {

namespace {

__device__ __forceinline__ std::int64_t load_id(const void* ids, int type, std::int64_t i) {
  if (type == kIdFloat32) {
    const float v = static_cast<const float*>(ids)[i];
    if (!isfinite(v) || fabsf(v) > 9.0e18f) return -1;
    return static_cast<std::int64_t>(rintf(v));
  }
  return load_label(ids, type, i);
}

__global__ void gather_rows_kernel(const float* table, const void* ids, int id_type, std::int64_t n, std::int64_t rows,
                                   std::int64_t width, float* out, std::uint8_t* mask, Status* status) {
  const std::int64_t total = n * width;
  for (std::int64_t k = global_thread(); k < total; k += grid_threads()) {
    const std::int64_t i = k / width, c = k % width;
    const std::int64_t id = load_id(ids, id_type, i);
    const bool ok = id >= 0 && id < rows;
    out[k] = ok ? table[id * width + c] : 0.f;
    if (c == 0) {
      if (!ok) atomicMin(&status->bad_row, static_cast<unsigned long long>(i));
      if (mask) mask[i] = id != 0 ? 1 : 0;
    }
  }
}

__global__ void scatter_add_rows_kernel(const void* ids, int id_type, std::int64_t n, std::int64_t rows,
                                        std::int64_t width, const float* dy, float* dtable, Status* status) {
  for (std::int64_t c = global_thread(); c < width; c += grid_threads()) {
    for (std::int64_t i = 0; i < n; ++i) {
      const std::int64_t id = load_id(ids, id_type, i);
      if (id < 0 || id >= rows) {
        if (c == 0) atomicMin(&status->bad_row, static_cast<unsigned long long>(i));
        continue;
      }
      dtable[id * width + c] += dy[i * width + c];
    }
  }
}

__global__ void grouped_row_sums_kernel(const float* dy, const std::int64_t* offsets, const std::int64_t* positions,
                                        std::int64_t groups, std::int64_t width, float* sums) {
  const std::int64_t total = groups * width;
  for (std::int64_t k = global_thread(); k < total; k += grid_threads()) {
    const std::int64_t g = k / width, c = k % width;
    float acc = 0.f;
    for (std::int64_t p = offsets[g]; p < offsets[g + 1]; ++p) acc += dy[positions[p] * width + c];
    sums[k] = acc;
  }
}

}  // namespace

void grouped_row_sums(const float* dy, const std::int64_t* offsets, const std::int64_t* positions, std::int64_t groups,
                      std::int64_t width, float* sums, cudaStream_t stream) {
  if (groups == 0 || width == 0) return;
  grouped_row_sums_kernel<<<elementwise_blocks(groups * width), kThreads, 0, stream>>>(dy, offsets, positions, groups,
                                                                                       width, sums);
}

void gather_rows(const float* table, const void* ids, int id_type, std::int64_t n, std::int64_t rows,
                 std::int64_t width, float* out, std::uint8_t* mask, Status* status, cudaStream_t stream) {
  if (n == 0 || width == 0) return;
  gather_rows_kernel<<<elementwise_blocks(n * width), kThreads, 0, stream>>>(table, ids, id_type, n, rows, width, out,
                                                                             mask, status);
}

void scatter_add_rows(const void* ids, int id_type, std::int64_t n, std::int64_t rows, std::int64_t width,
                      const float* dy, float* dtable, Status* status, cudaStream_t stream) {
  if (n == 0 || width == 0) return;
  scatter_add_rows_kernel<<<elementwise_blocks(width), kThreads, 0, stream>>>(ids, id_type, n, rows, width, dy, dtable,
                                                                              status);
}

}  // namespace kerascpp::cuda::kern
