#include "distribute/replica_pool.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "backend/gpu_support.hpp"

namespace kerascpp::distribute {

ReplicaPool::ReplicaPool(std::string kind, std::vector<Device> devices, CrossDeviceOpsKind ops,
                         StrategyOptions options)
    : kind_(std::move(kind)),
      devices_(std::move(devices)),
      ops_(ops),
      options_(options),
      barrier_(static_cast<int>(devices_.size())) {
  int n = static_cast<int>(devices_.size());
  int threads = options_.threads_per_replica;
  if (threads <= 0) threads = std::max(1, static_cast<int>(std::thread::hardware_concurrency()) / n);
  contexts_.resize(static_cast<std::size_t>(n));
  published_.assign(static_cast<std::size_t>(n), nullptr);
  scratch_.resize(static_cast<std::size_t>(n));
  bool gpus = devices_.front().kind == Device::Kind::gpu;
  for (int r = 0; r < n; ++r) {
    const Device& d = devices_[static_cast<std::size_t>(r)];
    backends_.push_back(gpus ? detail::make_gpu_backend(d.index) : make_cpu_backend(threads));
  }
  if (gpus && n > 1) {
    std::vector<Backend*> raw;
    for (auto& b : backends_) raw.push_back(b.get());
    gpu_collectives_ = detail::make_gpu_collectives(raw, ops_);
  }
  for (int r = 0; r < n; ++r) {
    auto& ctx = contexts_[static_cast<std::size_t>(r)];
    ctx.replica_id = r;
    ctx.num_replicas = n;
    ctx.backend = backends_[static_cast<std::size_t>(r)].get();
    ctx.cross = n == 1 ? nullptr : gpu_collectives_ ? static_cast<CrossReplica*>(gpu_collectives_.get()) : this;
  }
  if (n > 1)
    for (int r = 0; r < n; ++r) workers_.emplace_back([this, r] { worker_loop(r); });
}

ReplicaPool::~ReplicaPool() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  work_cv_.notify_all();
  for (auto& t : workers_) t.join();
}

std::string ReplicaPool::name() const {
  std::string devs;
  for (auto& d : devices_) devs += (devs.empty() ? "" : ", ") + d.str();
  if (kind_ == "OneDeviceStrategy") return fmt::format("{}({})", kind_, devs);
  if (devices_.front().kind == Device::Kind::gpu) return fmt::format("{}({}; {})", kind_, devs, cross_device_ops_name(ops_));
  return fmt::format("{}({}; {}, {} thread(s) per replica)", kind_, devs, cross_device_ops_name(ops_),
                     backends_.front()->num_threads());
}

void ReplicaPool::worker_loop(int replica) {
  std::size_t seen = 0;
  for (;;) {
    const std::function<void(ReplicaContext&)>* job;
    {
      std::unique_lock lock(mu_);
      work_cv_.wait(lock, [&] { return stopping_ || job_generation_ != seen; });
      if (stopping_) return;
      seen = job_generation_;
      job = job_;
    }
    std::exception_ptr err;
    try {
      run_on_device(replica, *job);
    } catch (const detail::ReplicaAborted&) {
      // Released because another replica failed; that replica's error is the one reported.
    } catch (...) {
      err = std::current_exception();
      abort_collectives();
    }
    std::lock_guard lock(mu_);
    // Hand the exception over (not a copy): only the calling thread then owns and frees it.
    if (err && !first_error_) first_error_ = std::move(err);
    err = nullptr;
    if (--pending_ == 0) done_cv_.notify_all();
  }
}

void ReplicaPool::run_on_device(int replica, const std::function<void(ReplicaContext&)>& fn) {
  // Tensors the step allocates go to the replica's device; a GPU replica's thread drives its GPU.
  ReplicaContext& ctx = contexts_[static_cast<std::size_t>(replica)];
  DeviceScope scope(ctx.backend->device());  // CPU replicas all allocate host memory (cpu:0)
  const Device& d = devices_[static_cast<std::size_t>(replica)];
  auto gpu = d.kind == Device::Kind::gpu ? detail::enter_gpu(d.index) : nullptr;
  fn(ctx);
}

void ReplicaPool::run(const std::function<void(ReplicaContext&)>& fn) {
  if (workers_.empty()) {
    run_on_device(0, fn);
    return;
  }
  std::exception_ptr err;
  {
    std::unique_lock lock(mu_);
    job_ = &fn;
    pending_ = num_replicas();
    first_error_ = nullptr;
    ++job_generation_;
    work_cv_.notify_all();
    done_cv_.wait(lock, [&] { return pending_ == 0; });
    err = std::move(first_error_);
    first_error_ = nullptr;
    job_ = nullptr;
  }
  if (err) {
    barrier_.reset();
    if (gpu_collectives_) gpu_collectives_->reset();
    std::lock_guard lock(async_mu_);
    async_aborted_ = false;
    buckets_.clear();
    std::rethrow_exception(err);
  }
}

void ReplicaPool::check_same_tensors(const std::vector<const std::vector<Tensor>*>& lists) const {
  const auto& first = *lists.front();
  for (std::size_t q = 1; q < lists.size(); ++q) {
    const auto& other = *lists[q];
    bool same = other.size() == first.size();
    for (std::size_t t = 0; same && t < first.size(); ++t) same = other[t].numel() == first[t].numel();
    if (!same)
      throw ShapeError(fmt::format("all-reduce: replica 0 and replica {} passed different tensor lists ({} vs {} tensors "
                              "or different sizes); every replica must reduce the same variables in the same order",
                              q, first.size(), other.size()));
  }
}

void ReplicaPool::reduce_range(const std::vector<const std::vector<Tensor>*>& lists, std::size_t t,
                               std::int64_t begin, std::int64_t end, std::vector<float>& acc) const {
  if (begin >= end) return;
  acc.assign(static_cast<std::size_t>(end - begin), 0.f);  // capacity is kept: no allocation in steady state
  for (const auto* list : lists) {
    const float* src = (*list)[t].data<float>() + begin;
    for (std::int64_t i = 0; i < end - begin; ++i) acc[static_cast<std::size_t>(i)] += src[i];
  }
  for (const auto* list : lists) {
    float* dst = const_cast<Tensor&>((*list)[t]).data<float>() + begin;
    std::copy(acc.begin(), acc.end(), dst);
  }
}

void ReplicaPool::all_reduce_sum(int replica, const std::vector<Tensor>& tensors) {
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

void ReplicaPool::begin_all_reduce_sum(int replica, int bucket, const std::vector<Tensor>& tensors) {
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

void ReplicaPool::reduce_bucket(int replica, int bucket) {
  std::vector<const std::vector<Tensor>*> parts;
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

void ReplicaPool::wait_all_reduces(int replica) {
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

void ReplicaPool::abort_collectives() {
  barrier_.abort();
  if (gpu_collectives_) gpu_collectives_->abort();
  std::lock_guard lock(async_mu_);
  async_aborted_ = true;
  async_cv_.notify_all();
}

}  // namespace kerascpp::distribute
