// The grouping behind Backend::unique_row_sums, shared by the CPU and CUDA backends: the
// distinct ids of a list of (checked) row ids, ascending, and for each one the positions that
// hold it in position order (CSR: positions[offsets[k] .. offsets[k + 1])). A stable sort of the
// positions by id gives both; summing each group in that order matches scatter_add_rows' order.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <vector>

#include "backend/embedding_ids.hpp"
#include "check.hpp"

namespace kerascpp::op_shapes {

// Checks unique_row_sums' arguments; returns the row width D.
inline std::int64_t check_unique_row_sums(const Tensor& ids, const Tensor& dy, std::int64_t rows, const char* op) {
  check_embedding_ids(ids, op);
  KERASCPP_CHECK_VALUE(rows > 0, "{}: the table must have at least one row, got rows = {}", op, rows);
  KERASCPP_CHECK_SHAPE(dy.dtype() == DType::float32 && dy.rank() == ids.rank() + 1,
                       "{}: dy must be float32 [ids..., D] for ids {}, got {} {}", op, shape_str(ids.shape()),
                       dtype_name(dy.dtype()), shape_str(dy.shape()));
  const std::int64_t D = dy.shape().back();
  KERASCPP_CHECK_SHAPE(dy.shape() == embedding_rows_shape(ids, D),
                       "{}: dy has shape {} but ids {} with rows of {} need {}", op, shape_str(dy.shape()),
                       shape_str(ids.shape()), D, shape_str(embedding_rows_shape(ids, D)));
  return D;
}

// Host ids (raw storage of dtype `type`, n of them) as row numbers, each checked against `rows`.
inline std::vector<std::int64_t> host_row_ids(const void* data, DType type, std::int64_t n, std::int64_t rows,
                                              const char* op) {
  std::vector<std::int64_t> out(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    std::int64_t id;
    if (type == DType::int32) id = static_cast<const std::int32_t*>(data)[i];
    else if (type == DType::int64) id = static_cast<const std::int64_t*>(data)[i];
    else if (type == DType::uint8) id = static_cast<const std::uint8_t*>(data)[i];
    else id = float_id(static_cast<const float*>(data)[i]);
    if (id < 0 || id >= rows) throw_id_out_of_range(id, i, rows, op);
    out[static_cast<std::size_t>(i)] = id;
  }
  return out;
}

struct RowGroups {
  std::vector<std::int64_t> ids;        // distinct, ascending
  std::vector<std::int64_t> offsets;    // ids.size() + 1
  std::vector<std::int64_t> positions;  // grouped by id, ascending inside a group
};

inline RowGroups group_rows(const std::vector<std::int64_t>& rows) {
  RowGroups g;
  g.positions.resize(rows.size());
  std::iota(g.positions.begin(), g.positions.end(), std::int64_t{0});
  std::stable_sort(g.positions.begin(), g.positions.end(), [&](std::int64_t a, std::int64_t b) {
    return rows[static_cast<std::size_t>(a)] < rows[static_cast<std::size_t>(b)];
  });
  for (std::size_t i = 0; i < g.positions.size(); ++i) {
    const std::int64_t id = rows[static_cast<std::size_t>(g.positions[i])];
    if (g.ids.empty() || g.ids.back() != id) {
      g.ids.push_back(id);
      g.offsets.push_back(static_cast<std::int64_t>(i));
    }
  }
  g.offsets.push_back(static_cast<std::int64_t>(g.positions.size()));
  return g;
}

}  // namespace kerascpp::op_shapes
