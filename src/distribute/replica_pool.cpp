#include "distribute/replica_pool.hpp"

#include <fmt/format.h>

#include <algorithm>

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
  for (int r = 0; r < n; ++r) {
    backends_.push_back(make_cpu_backend(threads));
    auto& ctx = contexts_[static_cast<std::size_t>(r)];
    ctx.replica_id = r;
    ctx.num_replicas = n;
    ctx.backend = backends_.back().get();
    ctx.cross = n > 1 ? this : nullptr;
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
      (*job)(contexts_[static_cast<std::size_t>(replica)]);
    } catch (const detail::ReplicaAborted&) {
      // Released because another replica failed; that replica's error is the one reported.
    } catch (...) {
      err = std::current_exception();
      barrier_.abort();
    }
    std::lock_guard lock(mu_);
    if (err && !first_error_) first_error_ = err;
    if (--pending_ == 0) done_cv_.notify_all();
  }
}

void ReplicaPool::run(const std::function<void(ReplicaContext&)>& fn) {
  if (workers_.empty()) {
    fn(contexts_.front());
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
    err = first_error_;
    job_ = nullptr;
  }
  if (err) {
    barrier_.reset();
    std::rethrow_exception(err);
  }
}

void ReplicaPool::all_reduce_sum(int replica, const std::vector<Tensor>& tensors) {
  int n = num_replicas();
  if (n == 1) return;
  published_[static_cast<std::size_t>(replica)] = &tensors;
  barrier_.arrive_and_wait();
  const auto& mine = tensors;
  for (std::size_t t = 0; t < mine.size(); ++t) {
    std::int64_t len = mine[t].numel();
    for (int q = 0; q < n; ++q) {
      const auto& theirs = *published_[static_cast<std::size_t>(q)];
      if (theirs.size() != mine.size() || theirs[t].numel() != len)
        throw Error(fmt::format("all_reduce_sum: replica {} and replica {} passed different tensors (tensor {}: {} vs "
                                "{} values); every replica must reduce the same list",
                                replica, q, t, len, t < theirs.size() ? theirs[t].numel() : -1));
    }
    std::int64_t begin = len * replica / n, end = len * (replica + 1) / n;
    if (begin == end) continue;
    // Sum in fixed replica order into a scratch, then broadcast to every copy.
    auto& acc = scratch_[static_cast<std::size_t>(replica)];
    acc.assign(static_cast<std::size_t>(end - begin), 0.f);  // capacity is kept: no allocation in steady state
    for (int q = 0; q < n; ++q) {
      const float* src = (*published_[static_cast<std::size_t>(q)])[t].data<float>() + begin;
      for (std::int64_t i = 0; i < end - begin; ++i) acc[static_cast<std::size_t>(i)] += src[i];
    }
    for (int q = 0; q < n; ++q) {
      float* dst = const_cast<Tensor&>((*published_[static_cast<std::size_t>(q)])[t]).data<float>() + begin;
      std::copy(acc.begin(), acc.end(), dst);
    }
  }
  barrier_.arrive_and_wait();
}

}  // namespace kerascpp::distribute
