#include "distribute/collectives/shared_memory.hpp"
#include "check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

namespace kerascpp::distribute {

SharedMemoryCollective::SharedMemoryCollective(int num_replicas, CrossDeviceOpsKind ops)
    : num_replicas_(num_replicas), ops_(ops), barrier_(num_replicas) {
  published_.assign(static_cast<std::size_t>(num_replicas), nullptr);
  scratch_.resize(static_cast<std::size_t>(num_replicas));
  counts_.assign(static_cast<std::size_t>(num_replicas), 0);
  row_parts_.assign(static_cast<std::size_t>(num_replicas), {nullptr, nullptr});
}

void SharedMemoryCollective::check_same_tensors(const TensorLists& lists) {
  const auto& first = *lists.front();
  for (std::size_t q = 1; q < lists.size(); ++q) {
    const auto& other = *lists[q];
    bool same = other.size() == first.size();
    for (std::size_t t = 0; same && t < first.size(); ++t) same = other[t].numel() == first[t].numel();
    KERASCPP_CHECK_SHAPE(same,
                         "all-reduce: replica 0 and replica {} passed different tensor lists ({} vs {} tensors "
                         "or different sizes); every replica must reduce the same variables in the same order",
                         q, first.size(), other.size());
  }
}

void SharedMemoryCollective::reduce_range(const TensorLists& lists, std::size_t t, std::int64_t begin, std::int64_t end,
                                          std::vector<float>& acc) {
  if (begin >= end) return;
  acc.assign(static_cast<std::size_t>(end - begin), 0.f);  // capacity is kept: no allocation in steady state
  for (const auto* list : lists) {
    const float* src = (*list)[t].data<float>() + begin;
    for (std::int64_t i = 0; i < end - begin; ++i) acc[static_cast<std::size_t>(i)] += src[i];
  }
  for (auto* list : lists) {
    float* dst = (*list)[t].data<float>() + begin;
    std::copy(acc.begin(), acc.end(), dst);
  }
}

void SharedMemoryCollective::all_reduce_sum(int replica, std::vector<Tensor>& tensors) {
  int n = num_replicas();
  if (n == 1) return;
  published_[static_cast<std::size_t>(replica)] = &tensors;
  barrier_.arrive_and_wait();
  check_same_tensors(published_);
  auto& acc = scratch_[static_cast<std::size_t>(replica)];
  if (ops_ == CrossDeviceOpsKind::reduction_to_one_device) {
    // Replica 0 ("device 0") sums everything and writes the result back to every copy.
    if (replica == 0)
      for (std::size_t t = 0; t < tensors.size(); ++t) reduce_range(published_, t, 0, tensors[t].numel(), acc);
  } else {
    // Each replica reduces its own slice of every tensor; the slices are disjoint.
    for (std::size_t t = 0; t < tensors.size(); ++t) {
      std::int64_t len = tensors[t].numel();
      reduce_range(published_, t, len * replica / n, len * (replica + 1) / n, acc);
    }
  }
  barrier_.arrive_and_wait();
}

void SharedMemoryCollective::begin_all_reduce_sum(int replica, int bucket, std::vector<Tensor>& tensors) {
  int n = num_replicas();
  if (n == 1) return;
  std::unique_lock lock(async_mu_);
  if (async_aborted_) throw detail::ReplicaAborted();
  if (buckets_.size() <= static_cast<std::size_t>(bucket)) buckets_.resize(static_cast<std::size_t>(bucket) + 1);
  PendingBucket& b = buckets_[static_cast<std::size_t>(bucket)];
  if (b.parts.empty()) b.parts.assign(static_cast<std::size_t>(n), nullptr);
  b.parts[static_cast<std::size_t>(replica)] = &tensors;
  if (++b.arrived < n) return;  // not the last: go on with backward
  // Last to arrive: every replica's gradients of this bucket are final. Shared memory reduces it
  // right here; ReductionToOneDevice leaves it to replica 0 (now, or in its wait_all_reduces).
  if (ops_ == CrossDeviceOpsKind::reduction_to_one_device && replica != 0) {
    async_cv_.notify_all();  // replica 0 may be waiting for this bucket to be complete
    return;
  }
  lock.unlock();
  reduce_bucket(replica, bucket);
}

void SharedMemoryCollective::reduce_bucket(int replica, int bucket) {
  TensorLists parts;
  {
    std::lock_guard lock(async_mu_);
    parts = buckets_[static_cast<std::size_t>(bucket)].parts;
    buckets_[static_cast<std::size_t>(bucket)].claimed = true;
  }
  check_same_tensors(parts);
  auto& acc = scratch_[static_cast<std::size_t>(replica)];
  for (std::size_t t = 0; t < parts.front()->size(); ++t) reduce_range(parts, t, 0, (*parts.front())[t].numel(), acc);
  std::lock_guard lock(async_mu_);
  buckets_[static_cast<std::size_t>(bucket)].done = true;
  async_cv_.notify_all();
}

void SharedMemoryCollective::wait_all_reduces(int replica) {
  int n = num_replicas();
  if (n == 1) return;
  if (ops_ == CrossDeviceOpsKind::reduction_to_one_device && replica == 0) {
    // Replica 0 reduces, in bucket order, every bucket that all replicas handed in after it did.
    for (std::size_t k = 0;; ++k) {
      std::unique_lock lock(async_mu_);
      async_cv_.wait(lock, [&] { return async_aborted_ || k >= buckets_.size() || buckets_[k].arrived == n; });
      if (async_aborted_) throw detail::ReplicaAborted();
      if (k >= buckets_.size()) break;
      if (buckets_[k].claimed) continue;
      lock.unlock();
      reduce_bucket(replica, static_cast<int>(k));
    }
  }
  {
    std::unique_lock lock(async_mu_);
    async_cv_.wait(lock, [&] {
      if (async_aborted_) return true;
      for (auto& b : buckets_)
        if (!b.done) return false;
      return true;
    });
    if (async_aborted_) throw detail::ReplicaAborted();
  }
  barrier_.arrive_and_wait();  // everyone has seen every bucket done
  if (replica == 0) {
    std::lock_guard lock(async_mu_);
    buckets_.clear();
  }
  barrier_.arrive_and_wait();  // nobody starts the next step's buckets before the reset
}

std::vector<std::int64_t> SharedMemoryCollective::all_gather_counts(int replica, std::int64_t mine) {
  counts_[static_cast<std::size_t>(replica)] = mine;
  barrier_.arrive_and_wait();
  std::vector<std::int64_t> all = counts_;
  barrier_.arrive_and_wait();  // nobody overwrites counts_ before everyone has read them
  return all;
}

void SharedMemoryCollective::all_gather_rows(int replica, const Tensor& ids, const Tensor& rows, Tensor& all_ids,
                                             Tensor& all_rows) {
  KERASCPP_CHECK_SHAPE(!(ids.dtype() != DType::int64 || ids.rank() != 1 || rows.dtype() != DType::float32 ||
                         rows.rank() != 2 || rows.dim(0) != ids.dim(0)),
                       "all_gather_rows: replica {} passed ids {} {} and rows {} {}; need int64 [n] and "
                       "float32 [n, D]",
                       replica, dtype_name(ids.dtype()), shape_str(ids.shape()), dtype_name(rows.dtype()),
                       shape_str(rows.shape()));
  row_parts_[static_cast<std::size_t>(replica)] = {&ids, &rows};
  barrier_.arrive_and_wait();
  const std::int64_t D = rows.dim(1);
  std::int64_t total = 0;
  for (std::size_t q = 0; q < row_parts_.size(); ++q) {
    const Tensor& other = *row_parts_[q].second;
    KERASCPP_CHECK_SHAPE(other.dim(1) == D,
                         "all_gather_rows: replica {} passed rows of width {}, replica {} of width {}", replica, D, q,
                         other.dim(1));
    total += other.dim(0);
  }
  all_ids = Tensor({total}, DType::int64);
  all_rows = Tensor({total, D}, DType::float32);
  std::int64_t at = 0;
  for (const auto& [part_ids, part_rows] : row_parts_) {
    const std::int64_t n = part_ids->dim(0);
    if (n > 0) {
      std::memcpy(all_ids.data<std::int64_t>() + at, part_ids->raw(),
                  static_cast<std::size_t>(n) * sizeof(std::int64_t));
      std::memcpy(all_rows.data<float>() + at * D, part_rows->raw(), static_cast<std::size_t>(n * D) * sizeof(float));
    }
    at += n;
  }
  barrier_.arrive_and_wait();  // the published tensors stay alive until everyone has copied them
}

void SharedMemoryCollective::abort() {
  barrier_.abort();
  std::lock_guard lock(async_mu_);
  async_aborted_ = true;
  async_cv_.notify_all();
}

void SharedMemoryCollective::reset() {
  barrier_.reset();
  std::lock_guard lock(async_mu_);
  async_aborted_ = false;
  buckets_.clear();
}

}  // namespace kerascpp::distribute
