// SharedMemoryCollective: the all-reduce between CPU replicas (threads of one process), through
// their shared memory. Every replica publishes its tensors; each sums a disjoint slice of every
// tensor over the replicas in replica order 0..N-1 (so the sum is the same bits whoever
// computes it) and writes it into every replica's copy. ReductionToOneDevice has replica 0 sum
// everything instead. Gradient buckets (begin_all_reduce_sum) are summed by the replica that
// hands a bucket in last, while the others go on with their backward pass.
#pragma once
#include <condition_variable>
#include <mutex>
#include <vector>

#include "distribute/abortable_barrier.hpp"
#include "distribute/collectives/device_collectives.hpp"
#include "kerascpp/distribute/strategy.hpp"

namespace kerascpp::distribute {

class SharedMemoryCollective final : public detail::DeviceCollectives {
 public:
  SharedMemoryCollective(int num_replicas, CrossDeviceOpsKind ops);

  int num_replicas() const override { return num_replicas_; }
  void all_reduce_sum(int replica, std::vector<Tensor>& tensors) override;
  void begin_all_reduce_sum(int replica, int bucket, std::vector<Tensor>& tensors) override;
  void wait_all_reduces(int replica) override;
  // Row gradients: every replica publishes, then each copies all of them, in replica order.
  bool gathers_rows() const override { return true; }
  std::vector<std::int64_t> all_gather_counts(int replica, std::int64_t mine) override;
  void all_gather_rows(int replica, const Tensor& ids, const Tensor& rows, Tensor& all_ids, Tensor& all_rows) override;
  // Releases replicas waiting in a collective (they throw ReplicaAborted): another one failed.
  void abort() override;
  // After an aborted step, before the next one.
  void reset() override;

 private:
  using TensorLists = std::vector<std::vector<Tensor>*>;  // one published list per replica
  // Sums elements [begin, end) of tensor t over every replica's list, in replica order, into all copies.
  static void reduce_range(const TensorLists& lists, std::size_t t, std::int64_t begin, std::int64_t end,
                           std::vector<float>& acc);
  static void check_same_tensors(const TensorLists& lists);
  void reduce_bucket(int replica, int bucket);

  int num_replicas_;
  CrossDeviceOpsKind ops_;
  detail::AbortableBarrier barrier_;
  TensorLists published_;
  std::vector<std::vector<float>> scratch_;                         // per replica: the slice being summed
  std::vector<std::int64_t> counts_;                                // all_gather_counts, per replica
  std::vector<std::pair<const Tensor*, const Tensor*>> row_parts_;  // all_gather_rows, per replica

  // Asynchronous bucket reductions of the current step.
  struct PendingBucket {
    TensorLists parts;
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
