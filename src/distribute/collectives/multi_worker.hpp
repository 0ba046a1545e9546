// MultiWorkerCollective: the all-reduce of a worker's CPU replicas with every other worker's.
// Inside the worker the replicas' tensors are summed in replica order into one contiguous buffer
// (as SharedMemoryCollective sums them); across workers that buffer goes through the WorkerGroup's
// non-blocking all-reduce (MPI's MPI_Iallreduce, or Gloo's on its communication thread); the result is written into
// every local replica's copy, so all replicas of all workers hold the same bits. Gradient buckets start their
// cross-worker reduction as soon as the worker's last replica hands the bucket in, in bucket order (every worker issues
// the same sequence of collectives), while backward goes on; wait_all_reduces finishes them.
#pragma once
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backend/gpu_support.hpp"
#include "distribute/abortable_barrier.hpp"
#include "distribute/worker_group.hpp"

namespace kerascpp::distribute {

class MultiWorkerCollective final : public detail::DeviceCollectives {
 public:
  MultiWorkerCollective(int local_replicas, std::shared_ptr<WorkerGroup> world);

  int num_replicas() const override { return local_ * world_->size(); }
  void all_reduce_sum(int replica, std::vector<Tensor>& tensors) override;
  void begin_all_reduce_sum(int replica, int bucket, std::vector<Tensor>& tensors) override;
  void wait_all_reduces(int replica) override;
  void abort() override;
  void reset() override;

 private:
  using TensorLists = std::vector<std::vector<Tensor>*>;  // one list per local replica
  struct Bucket {
    TensorLists parts;
    int arrived = 0;
    bool packed = false;
    std::vector<float> sum;  // this worker's sum, then (after the cross-worker reduction) everyone's
    std::unique_ptr<PendingReduction> pending;
  };
  // Sums the lists in replica order into `out` (concatenated tensors) and back.
  static void pack_local_sum(const TensorLists& lists, std::vector<float>& out);
  static void unpack(const std::vector<float>& sum, const TensorLists& lists);
  void start_packed_buckets();  // under start_mu_: reductions start strictly in bucket order

  int local_;
  std::shared_ptr<WorkerGroup> world_;
  detail::AbortableBarrier barrier_;
  TensorLists published_;
  std::vector<float> sync_sum_;
  std::int64_t steps_ = 0;  // steps whose buckets finished (names the step in stall reports)

  std::mutex mu_;
  std::deque<Bucket> buckets_;  // a deque: growing it keeps the addresses other threads hold
  std::size_t next_start_ = 0;
  std::mutex start_mu_;
  bool aborted_ = false;
};

}  // namespace kerascpp::distribute
