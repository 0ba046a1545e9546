// CpuBackend::unique_row_sums: an embedding's row gradient without the table (IndexedSlices).
// The positions are grouped by id on one thread (sorting n ids is cheap next to n·D adds), then
// threads split the distinct ids; each row sums its positions in order, so the bits match
// scatter_add_rows into a zeroed table for any thread count.
#include <cstring>

#include "backend/cpu/cpu_backend.hpp"
#include "backend/cpu/parallel.hpp"
#include "backend/unique_rows.hpp"

namespace kerascpp::cpu {

void CpuBackend::unique_row_sums(const Tensor& ids, const Tensor& dy, std::int64_t rows, Tensor& unique_ids,
                                 Tensor& sums) {
  enter();
  const char* op = "unique_row_sums";
  const std::int64_t D = op_shapes::check_unique_row_sums(ids, dy, rows, op);
  const op_shapes::RowGroups g =
      op_shapes::group_rows(op_shapes::host_row_ids(ids.raw(), ids.dtype(), ids.numel(), rows, op));
  const auto u = static_cast<std::int64_t>(g.ids.size());
  unique_ids = Tensor({u}, DType::int64);
  sums = Tensor({u, D}, DType::float32);
  if (u > 0) std::memcpy(unique_ids.raw(), g.ids.data(), g.ids.size() * sizeof(std::int64_t));
  const float* pdy = dy.data<float>();
  float* ps = sums.data<float>();
  parallel_for(u, std::max<std::int64_t>(1, kElementGrain / std::max<std::int64_t>(D, 1)),
               [&](std::int64_t k0, std::int64_t k1) {
                 for (std::int64_t k = k0; k < k1; ++k) {
                   float* dst = ps + k * D;
                   std::fill(dst, dst + D, 0.f);
                   for (std::int64_t p = g.offsets[static_cast<std::size_t>(k)];
                        p < g.offsets[static_cast<std::size_t>(k) + 1]; ++p) {
                     const float* src = pdy + g.positions[static_cast<std::size_t>(p)] * D;
                     for (std::int64_t c = 0; c < D; ++c) dst[c] += src[c];
                   }
                 }
               });
}

}  // namespace kerascpp::cpu
