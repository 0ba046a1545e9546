// ReplicaPool: N replicas, each with its own Backend and, when N > 1, its own worker thread.
// Implements StrategyImpl for OneDeviceStrategy (N = 1) and MirroredStrategy. CPU replicas
// reduce in shared memory (this class's CrossReplica); GPU replicas use DeviceCollectives.
#pragma once
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "backend/gpu_support.hpp"
#include "distribute/abortable_barrier.hpp"
#include "distribute/strategy_impl.hpp"

namespace kerascpp::distribute {

class ReplicaPool : public StrategyImpl, public CrossReplica {
 public:
  ReplicaPool(std::string kind, std::vector<Device> devices, CrossDeviceOpsKind ops, StrategyOptions options);
  ~ReplicaPool() override;

  std::string name() const override;
  int num_replicas() const override { return static_cast<int>(contexts_.size()); }
  std::vector<Device> devices() const override { return devices_; }
  CrossDeviceOpsKind cross_device_ops() const override { return ops_; }
  void run(const std::function<void(ReplicaContext&)>& fn) override;
  ReplicaContext& context(int replica) override { return contexts_.at(static_cast<std::size_t>(replica)); }
  std::size_t bucket_bytes() const override { return options_.bucket_bytes; }

  // CrossReplica: shared-memory all-reduce. Every replica publishes its tensors, each reduces a
  // disjoint slice of every tensor in replica order 0..N-1 (so the sum is the same bits whoever
  // computes it) and writes the result into every replica's copy.
  void all_reduce_sum(int replica, const std::vector<Tensor>& tensors) override;
  void begin_all_reduce_sum(int replica, int bucket, const std::vector<Tensor>& tensors) override;
  void wait_all_reduces(int replica) override;

 private:
  void worker_loop(int replica);
  void run_on_device(int replica, const std::function<void(ReplicaContext&)>& fn);
  // Sums elements [begin, end) of tensor t over every replica's list, in replica order, into all copies.
  void reduce_range(const std::vector<const std::vector<Tensor>*>& lists, std::size_t t, std::int64_t begin,
                    std::int64_t end, std::vector<float>& acc) const;
  void check_same_tensors(const std::vector<const std::vector<Tensor>*>& lists) const;
  void abort_collectives();
  void reduce_bucket(int replica, int bucket);

  std::string kind_;
  std::vector<Device> devices_;
  CrossDeviceOpsKind ops_;
  StrategyOptions options_;
  std::vector<std::unique_ptr<Backend>> backends_;
  std::unique_ptr<detail::DeviceCollectives> gpu_collectives_;  // GPU replicas only
  std::vector<ReplicaContext> contexts_;

  // Work dispatch to worker threads.
  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable work_cv_, done_cv_;
  const std::function<void(ReplicaContext&)>* job_ = nullptr;
  std::size_t job_generation_ = 0;
  int pending_ = 0;
  bool stopping_ = false;
  std::exception_ptr first_error_;

  // Collective state.
  detail::AbortableBarrier barrier_;
  std::vector<const std::vector<Tensor>*> published_;
  std::vector<std::vector<float>> scratch_;

  // Asynchronous bucket reductions of the current step.
  struct PendingBucket {
    std::vector<const std::vector<Tensor>*> parts;
    int arrived = 0;
    bool claimed = false;  // a replica is reducing it
    bool done = false;
  };
  std::mutex async_mu_;
  std::condition_variable async_cv_;
  std::vector<PendingBucket> buckets_;
  bool async_aborted_ = false;
};

}  // namespace kerascpp::distribute
