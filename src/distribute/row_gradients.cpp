#include "distribute/row_gradients.hpp"

namespace kerascpp::detail {

RowGradientStats& row_gradient_stats() {
  static RowGradientStats stats;
  return stats;
}

void densify_row_gradient(Backend& backend, Variable& v, int replica) {
  auto& parts = v.grad_rows(replica);
  const bool first = v.take_first_grad(replica);  // true: backward wrote no dense part
  if (first && parts.empty()) v.grad(replica).fill(0.f);
  for (std::size_t i = 0; i < parts.size(); ++i)
    backend.scatter_add_rows(parts[i].ids, parts[i].rows, v.grad(replica), !(first && i == 0));
  parts.clear();
}

namespace {

void dense_all_reduce(ReplicaContext& ctx, Variable& v) {
  densify_row_gradient(*ctx.backend, v, ctx.replica_id);
  std::vector<Tensor> t{v.grad(ctx.replica_id)};
  ctx.cross->all_reduce_sum(ctx.replica_id, t);
  if (ctx.replica_id == 0) {
    row_gradient_stats().dense_reductions += 1;
    row_gradient_stats().dense_bytes += v.grad(0).nbytes();
  }
}

}  // namespace

void reduce_row_gradient(ReplicaContext& ctx, Variable& v) {
  const int r = ctx.replica_id;
  if (ctx.num_replicas <= 1 || ctx.cross == nullptr) return densify_row_gradient(*ctx.backend, v, r);
  if (!ctx.cross->gathers_rows()) return dense_all_reduce(ctx, v);  // NCCL, MPI: dense (see README)
  auto& parts = v.grad_rows(r);
  // -1: this replica's gradient is not a single row contribution (a dense part, e.g. a tied
  // softmax weight, or a layer called twice): everyone takes the dense path.
  const std::int64_t mine = v.has_grad(r) || parts.size() > 1 ? -1 : parts.empty() ? 0 : parts[0].ids.dim(0);
  const std::vector<std::int64_t> counts = ctx.cross->all_gather_counts(r, mine);
  std::int64_t total = 0;
  bool rows_only = true;
  for (std::int64_t c : counts) {
    rows_only = rows_only && c >= 0;
    total += c;
  }
  const std::int64_t V = v.shape().at(0), D = v.shape().at(1);
  const std::int64_t sparse_bytes = total * static_cast<std::int64_t>(sizeof(std::int64_t) + D * sizeof(float));
  const std::int64_t dense_bytes = V * D * static_cast<std::int64_t>(sizeof(float));
  if (!rows_only || sparse_bytes >= dense_bytes) return dense_all_reduce(ctx, v);
  const Device dev = v.grad(r).device();
  Tensor ids = parts.empty() ? Tensor({0}, DType::int64, dev) : parts[0].ids;
  Tensor rows = parts.empty() ? Tensor({0, D}, DType::float32, dev) : parts[0].rows;
  Tensor all_ids, all_rows;
  ctx.cross->all_gather_rows(r, ids, rows, all_ids, all_rows);
  parts.clear();
  v.take_first_grad(r);
  // Replica order, and inside a replica ascending ids: every replica adds the same sequence.
  ctx.backend->scatter_add_rows(all_ids, all_rows, v.grad(r), false);
  if (r == 0) {
    row_gradient_stats().sparse_reductions += 1;
    row_gradient_stats().sparse_bytes += sparse_bytes;
  }
}

}  // namespace kerascpp::detail
