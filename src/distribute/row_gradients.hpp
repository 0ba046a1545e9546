// Row gradients (TensorFlow's IndexedSlices) across replicas. An Embedding's gradient touches
// only the rows its batch looked up; all-reducing the dense [V, D] table gradient moves V·D
// floats per replica whatever the batch. Here every replica's deduplicated (ids, rows) are
// gathered instead, when that is smaller, and each replica adds them, in replica order, into its
// dense gradient: the same sum as the dense all-reduce (bit for bit on shared memory, where the
// dense path also sums replica 0..N-1 in order), and the optimizer then runs its ordinary dense
// update (Keras 3's semantics: Adam's moments decay on every row, see README).
#pragma once
#include <atomic>
#include <cstdint>

#include "kerascpp/core/variable.hpp"
#include "kerascpp/distribute/context.hpp"

namespace kerascpp::detail {

// Process-wide counts, by each worker's replica 0 (one count per variable per step), so tests and
// benchmarks can see which path ran. Bytes: what one replica hands the collective.
struct RowGradientStats {
  std::atomic<std::int64_t> sparse_reductions{0}, dense_reductions{0};
  std::atomic<std::int64_t> sparse_bytes{0}, dense_bytes{0};
  void reset() {
    sparse_reductions = 0;
    dense_reductions = 0;
    sparse_bytes = 0;
    dense_bytes = 0;
  }
};
RowGradientStats& row_gradient_stats();

// Adds v's row contributions of replica ctx into its dense grad() (zeroed first when backward
// wrote no dense part); afterwards has_grad() holds and grad_rows() is empty.
void densify_row_gradient(Backend& backend, Variable& v, int replica);

// Sums v's gradient (its dense part plus its rows) over every replica in sync into each replica's
// dense grad(). Called by every replica, for the same variables in the same order, outside bucket
// reductions. Gathers rows when every replica's gradient is rows only, the collective gathers rows
// and the gathered rows are smaller than the table; otherwise densifies and all-reduces.
void reduce_row_gradient(ReplicaContext& ctx, Variable& v);

}  // namespace kerascpp::detail
