// ReplicaPool: the StrategyImpl of OneDeviceStrategy (N = 1) and MirroredStrategy: N replicas,
// each with its own device, Backend and ReplicaContext. It composes the two mechanisms apart:
// ReplicaThreads runs a step on one thread per replica, leased from the process-wide WorkerPool
// for that step only (N > 1; a single replica runs on the calling thread), and a collective connects the replicas:
// SharedMemoryCollective for CPU replicas, the CUDA backend's DeviceCollectives for GPU replicas.
#pragma once
#include <functional>
#include <memory>
#include <vector>

#include "backend/gpu_support.hpp"
#include "distribute/replica_threads.hpp"
#include "distribute/strategy_impl.hpp"
#include "distribute/thread_governor.hpp"
#include "distribute/worker_group.hpp"

namespace kerascpp::distribute {

class ReplicaPool : public StrategyImpl {
 public:
  // `workers`: the other processes of a multi-worker job (null: this process alone). The
  // replicas here are then this worker's share of workers->size() * devices.size().
  ReplicaPool(std::string kind, std::vector<Device> devices, CrossDeviceOpsKind ops, StrategyOptions options,
              std::shared_ptr<WorkerGroup> workers = nullptr);
  ~ReplicaPool() override;

  std::string name() const override;
  int num_replicas() const override { return static_cast<int>(contexts_.size()); }
  std::vector<Device> devices() const override { return devices_; }
  CrossDeviceOpsKind cross_device_ops() const override { return ops_; }
  int num_workers() const override { return workers_ ? workers_->size() : 1; }
  int worker_index() const override { return workers_ ? workers_->rank() : 0; }
  std::vector<double> gather_over_workers(const std::vector<double>& mine, const char* what) override;
  void sum_over_workers(Tensor& t, const char* what) override;
  void run(const std::function<void(ReplicaContext&)>& fn) override;
  ReplicaContext& context(int replica) override { return contexts_.at(static_cast<std::size_t>(replica)); }
  std::size_t bucket_bytes() const override { return options_.bucket_bytes; }

 private:
  void run_on_device(int replica, const std::function<void(ReplicaContext&)>& fn);
  // This worker's first replica among all replicas in sync.
  int rank_offset_of_first_replica() const { return worker_index() * static_cast<int>(devices_.size()); }

  std::string kind_;
  std::vector<Device> devices_;
  CrossDeviceOpsKind ops_;
  StrategyOptions options_;
  std::shared_ptr<WorkerGroup> workers_;
  std::vector<std::unique_ptr<Backend>> backends_;
  std::unique_ptr<detail::DeviceCollectives> collectives_;  // N > 1 only
  std::vector<ReplicaContext> contexts_;
  std::unique_ptr<ReplicaThreads> threads_;   // N > 1 only
  int threads_per_replica_ = 1;               // the configured count, the governor's ceiling
  std::unique_ptr<ThreadGovernor> governor_;  // CPU replicas with more than one thread each
};

}  // namespace kerascpp::distribute
