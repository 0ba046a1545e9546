#include "distribute/replica_pool.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <thread>

#include "check.hpp"
#include "distribute/collectives/shared_memory.hpp"

namespace kerascpp::distribute {

ReplicaPool::ReplicaPool(std::string kind, std::vector<Device> devices, CrossDeviceOpsKind ops, StrategyOptions options,
                         std::shared_ptr<WorkerGroup> workers)
    : kind_(std::move(kind)), devices_(std::move(devices)), ops_(ops), options_(options), workers_(std::move(workers)) {
  int n = static_cast<int>(devices_.size());
  int threads = options_.threads_per_replica;
  // By default the cores are shared by every replica of every worker on this machine.
  const int sharing = n * (workers_ ? workers_->workers_on_this_machine() : 1);
  if (threads <= 0) threads = std::max(1, static_cast<int>(std::thread::hardware_concurrency()) / sharing);
  contexts_.resize(static_cast<std::size_t>(n));
  bool gpus = devices_.front().kind == Device::Kind::gpu;
  for (int r = 0; r < n; ++r) {
    const Device& d = devices_[static_cast<std::size_t>(r)];
    backends_.push_back(gpus ? detail::make_gpu_backend(d.index) : make_cpu_backend(threads));
  }
  if (workers_ && gpus) {
    // NCCL communicators over every worker's GPUs: rank 0 makes the unique id, MPI carries it.
    // (Compiled and reviewed; not yet run on GPUs: no session has had a machine with several.)
    detail::NcclSpan span{rank_offset_of_first_replica(), n * workers_->size(), {}};
    std::vector<char> id(span.unique_id.size());
    if (workers_->rank() == 0) {
      auto made = detail::make_nccl_unique_id();
      std::copy(made.begin(), made.end(), id.begin());
    }
    workers_->broadcast(id, "the NCCL unique id");
    std::copy(id.begin(), id.end(), span.unique_id.begin());
    std::vector<Backend*> raw;
    for (auto& b : backends_) raw.push_back(b.get());
    collectives_ = detail::make_gpu_collectives(raw, ops_, &span);
  } else if (workers_) {
    collectives_ = workers_->make_cpu_collective(n);  // across workers even with one local replica
  } else if (n > 1) {
    if (gpus) {
      std::vector<Backend*> raw;
      for (auto& b : backends_) raw.push_back(b.get());
      collectives_ = detail::make_gpu_collectives(raw, ops_);
    } else {
      collectives_ = std::make_unique<SharedMemoryCollective>(n, ops_);
    }
  }
  for (int r = 0; r < n; ++r) {
    auto& ctx = contexts_[static_cast<std::size_t>(r)];
    ctx.replica_id = r;
    ctx.num_replicas = n * num_workers();
    ctx.replica_id_in_sync = rank_offset_of_first_replica() + r;
    ctx.backend = backends_[static_cast<std::size_t>(r)].get();
    ctx.cross = collectives_.get();
  }
  if (n > 1) threads_ = std::make_unique<ReplicaThreads>(n, [this] { collectives_->abort(); });
  threads_per_replica_ = backends_.front()->num_threads();  // after KERASCPP_MAX_THREADS
  if (!gpus && threads_per_replica_ > 1 && ThreadGovernor::enabled_by_environment())
    governor_ = std::make_unique<ThreadGovernor>(threads_per_replica_, n);
}

// No thread outlives run(): the workers go back to the process-wide pool when a step returns.
ReplicaPool::~ReplicaPool() = default;

std::string ReplicaPool::name() const {
  std::string devs;
  for (auto& d : devices_) devs += (devs.empty() ? "" : ", ") + d.str();
  if (kind_ == "OneDeviceStrategy") return fmt::format("{}({})", kind_, devs);
  if (workers_)
    return fmt::format("{}({} workers x {}; {} + {}, {} thread(s) per replica)", kind_, workers_->size(), devs,
                       cross_device_ops_name(ops_), workers_->transport(), threads_per_replica_);
  if (devices_.front().kind == Device::Kind::gpu)
    return fmt::format("{}({}; {})", kind_, devs, cross_device_ops_name(ops_));
  return fmt::format("{}({}; {}, {} thread(s) per replica)", kind_, devs, cross_device_ops_name(ops_),
                     threads_per_replica_);
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
  if (governor_) {
    const int threads = governor_->threads_for_next_step();
    for (auto& backend : backends_)
      if (backend->num_threads() != threads) backend->set_num_threads(threads);
  }
  if (!threads_) {
    try {
      run_on_device(0, fn);
    } catch (...) {
      if (collectives_) {  // a lone replica of a multi-worker job: its peers are left mid-step
        collectives_->abort();
        collectives_->reset();
      }
      throw;
    }
    return;
  }
  try {
    threads_->run([&](int replica) { run_on_device(replica, fn); });
  } catch (...) {
    collectives_->reset();  // the step was aborted: the next one starts clean
    throw;
  }
}

std::vector<double> ReplicaPool::gather_over_workers(const std::vector<double>& mine, const char* what) {
  return workers_ ? workers_->all_gather(mine, what) : mine;
}

void ReplicaPool::sum_over_workers(Tensor& t, const char* what) {
  if (workers_) workers_->all_reduce_sum(t.data<float>(), t.numel(), what);
}

}  // namespace kerascpp::distribute
