// Embedding lookups on the CPU: gather_rows copies table rows picked by integer ids (and the
// mask_zero mask), scatter_add_rows accumulates row gradients back into the table. The scatter
// splits the table's columns between threads and every thread walks all positions in index
// order, so each table element sums its contributions in the same order for any thread count.
#include <algorithm>
#include <cstring>
#include <vector>

#include "backend/cpu/checks.hpp"
#include "backend/cpu/cpu_backend.hpp"
#include "backend/cpu/parallel.hpp"
#include "backend/embedding_ids.hpp"
#include "check.hpp"

namespace kerascpp::cpu {

namespace {

std::int64_t id_at(const Tensor& ids, std::int64_t i) {
  switch (ids.dtype()) {
    case DType::int32:
      return ids.data<std::int32_t>()[i];
    case DType::int64:
      return ids.data<std::int64_t>()[i];
    case DType::uint8:
      return ids.data<std::uint8_t>()[i];
    default:
      return op_shapes::float_id(ids.data<float>()[i]);
  }
}

// The ids as row numbers, every one checked against the table's row count (first bad one throws).
std::vector<std::int64_t> checked_ids(const Tensor& ids, std::int64_t rows, const char* op) {
  std::vector<std::int64_t> out(static_cast<std::size_t>(ids.numel()));
  for (std::int64_t i = 0; i < ids.numel(); ++i) {
    const std::int64_t id = id_at(ids, i);
    if (id < 0 || id >= rows) op_shapes::throw_id_out_of_range(id, i, rows, op);
    out[static_cast<std::size_t>(i)] = id;
  }
  return out;
}

}  // namespace

void CpuBackend::gather_rows(const Tensor& table, const Tensor& ids, Tensor& out, Tensor& mask) {
  enter();
  const char* op = "gather_rows";
  op_shapes::check_embedding_table(table, op, "table");
  op_shapes::check_embedding_ids(ids, op);
  const std::int64_t V = table.dim(0), D = table.dim(1), n = ids.numel();
  const std::vector<std::int64_t> rows = checked_ids(ids, V, op);
  prepare_output(out, op_shapes::embedding_rows_shape(ids, D), op, "out");
  const float* pt = table.data<float>();
  float* po = out.data<float>();
  parallel_for(n, std::max<std::int64_t>(1, kElementGrain / std::max<std::int64_t>(D, 1)),
               [&](std::int64_t i0, std::int64_t i1) {
                 for (std::int64_t i = i0; i < i1; ++i)
                   std::memcpy(po + i * D, pt + rows[static_cast<std::size_t>(i)] * D,
                               static_cast<std::size_t>(D) * sizeof(float));
               });
  if (!mask.defined()) return;
  if (mask.dtype() != DType::uint8 || mask.shape() != ids.shape()) mask = Tensor(ids.shape(), DType::uint8);
  std::uint8_t* pm = mask.data<std::uint8_t>();
  for (std::int64_t i = 0; i < n; ++i) pm[i] = rows[static_cast<std::size_t>(i)] != 0 ? 1 : 0;
}

void CpuBackend::scatter_add_rows(const Tensor& ids, const Tensor& dy, Tensor& dtable, bool accumulate) {
  enter();
  const char* op = "scatter_add_rows";
  op_shapes::check_embedding_ids(ids, op);
  op_shapes::check_embedding_table(dtable, op, "dtable");
  require_float(dy, op, "dy");
  const std::int64_t V = dtable.dim(0), D = dtable.dim(1), n = ids.numel();
  KERASCPP_CHECK_SHAPE(dy.shape() == op_shapes::embedding_rows_shape(ids, D),
                       "{}: dy has shape {} but ids {} with rows of {} need {}", op, shape_str(dy.shape()),
                       shape_str(ids.shape()), D, shape_str(op_shapes::embedding_rows_shape(ids, D)));
  const std::vector<std::int64_t> rows = checked_ids(ids, V, op);
  float* pt = dtable.data<float>();
  if (!accumulate) std::memset(pt, 0, static_cast<std::size_t>(dtable.numel()) * sizeof(float));
  const float* pdy = dy.data<float>();
  // Column blocks per thread; inside, positions in index order.
  parallel_for(D, std::max<std::int64_t>(1, kElementGrain / std::max<std::int64_t>(n, 1)),
               [&](std::int64_t c0, std::int64_t c1) {
                 for (std::int64_t i = 0; i < n; ++i) {
                   float* dst = pt + rows[static_cast<std::size_t>(i)] * D;
                   const float* src = pdy + i * D;
                   for (std::int64_t c = c0; c < c1; ++c) dst[c] += src[c];
                 }
               });
}

}  // namespace kerascpp::cpu
