#include "distribute/collectives/multi_worker.hpp"

#include <fmt/format.h>

#include "check.hpp"

namespace kerascpp::distribute {

MultiWorkerCollective::MultiWorkerCollective(int local_replicas, std::shared_ptr<WorkerGroup> world)
    : local_(local_replicas),
      world_(std::move(world)),
      barrier_(local_replicas),
      published_(static_cast<std::size_t>(local_replicas), nullptr) {}

void MultiWorkerCollective::pack_local_sum(const TensorLists& lists, std::vector<float>& out) {
  const auto& first = *lists.front();
  std::int64_t total = 0;
  for (std::size_t q = 1; q < lists.size(); ++q) {
    bool same = lists[q]->size() == first.size();
    for (std::size_t t = 0; same && t < first.size(); ++t) same = (*lists[q])[t].numel() == first[t].numel();
    KERASCPP_CHECK_SHAPE(
        same,
        "all-reduce: replica 0 and replica {} passed different tensor lists; every replica must reduce "
        "the same variables in the same order",
        q);
  }
  for (const auto& t : first) total += t.numel();
  out.assign(static_cast<std::size_t>(total), 0.f);
  std::int64_t off = 0;
  for (std::size_t t = 0; t < first.size(); ++t) {
    const std::int64_t n = first[t].numel();
    float* acc = out.data() + off;
    for (const auto* list : lists) {  // replica order, as SharedMemoryCollective sums
      const float* src = (*list)[t].data<float>();
      for (std::int64_t i = 0; i < n; ++i) acc[i] += src[i];
    }
    off += n;
  }
}

void MultiWorkerCollective::unpack(const std::vector<float>& sum, const TensorLists& lists) {
  for (auto* list : lists) {
    std::int64_t off = 0;
    for (auto& t : *list) {
      std::copy(sum.begin() + off, sum.begin() + off + t.numel(), t.data<float>());
      off += t.numel();
    }
  }
}

void MultiWorkerCollective::all_reduce_sum(int replica, std::vector<Tensor>& tensors) {
  published_[static_cast<std::size_t>(replica)] = &tensors;
  barrier_.arrive_and_wait();
  if (replica == 0) {
    pack_local_sum(published_, sync_sum_);
    const std::string what =
        fmt::format("a synchronized all-reduce (e.g. BatchNormalization statistics) in step {}", steps_ + 1);
    world_->all_reduce_sum(sync_sum_.data(), static_cast<std::int64_t>(sync_sum_.size()), what.c_str());
    unpack(sync_sum_, published_);
  }
  barrier_.arrive_and_wait();
}

void MultiWorkerCollective::begin_all_reduce_sum(int replica, int bucket, std::vector<Tensor>& tensors) {
  Bucket* b = nullptr;
  {
    std::lock_guard lock(mu_);
    if (aborted_) throw detail::ReplicaAborted();
    if (buckets_.size() <= static_cast<std::size_t>(bucket)) buckets_.resize(static_cast<std::size_t>(bucket) + 1);
    b = &buckets_[static_cast<std::size_t>(bucket)];
    if (b->parts.empty()) b->parts.assign(static_cast<std::size_t>(local_), nullptr);
    b->parts[static_cast<std::size_t>(replica)] = &tensors;
    if (++b->arrived < local_) return;  // not the last local replica: go on with backward
  }
  // Every local replica's gradients of this bucket are final: this worker's share is ready.
  pack_local_sum(b->parts, b->sum);
  {
    std::lock_guard lock(mu_);
    b->packed = true;
  }
  start_packed_buckets();
}

void MultiWorkerCollective::start_packed_buckets() {
  std::lock_guard start_lock(start_mu_);
  for (;;) {
    Bucket* b = nullptr;
    {
      std::lock_guard lock(mu_);
      if (next_start_ >= buckets_.size() || !buckets_[next_start_].packed) return;
      b = &buckets_[next_start_];
    }
    b->pending = world_->start_all_reduce_sum(b->sum.data(), static_cast<std::int64_t>(b->sum.size()),
                                              fmt::format("gradient bucket {} of step {}", next_start_, steps_ + 1));
    ++next_start_;
  }
}

void MultiWorkerCollective::wait_all_reduces(int replica) {
  barrier_.arrive_and_wait();  // every local replica handed in every bucket: all are started
  if (replica == 0) {
    for (std::size_t k = 0; k < buckets_.size(); ++k) {
      Bucket& b = buckets_[k];
      world_->wait(*b.pending, fmt::format("gradient bucket {} of step {}", k, steps_ + 1));
      unpack(b.sum, b.parts);
    }
    std::lock_guard lock(mu_);
    for (auto& b : buckets_) {  // keep the buffers' capacity for the next step
      b.arrived = 0;
      b.packed = false;
      std::fill(b.parts.begin(), b.parts.end(), nullptr);
      b.pending.reset();
    }
    next_start_ = 0;
    ++steps_;
  }
  barrier_.arrive_and_wait();  // nobody starts the next step's buckets before the reset
}

void MultiWorkerCollective::abort() {
  barrier_.abort();
  std::lock_guard lock(mu_);
  aborted_ = true;
  // Reductions may be in flight on some workers and not others: the job cannot go on.
  world_->poison("a replica step failed part-way through its collectives");
}

void MultiWorkerCollective::reset() {
  barrier_.reset();
  std::lock_guard lock(mu_);
  aborted_ = false;
  buckets_.clear();
  next_start_ = 0;
}

}  // namespace kerascpp::distribute
