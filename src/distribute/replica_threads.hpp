// ReplicaThreads: runs the same job on one thread per replica with its replica index, like the
// per-device threads of TensorFlow's MirroredStrategy. The threads are leased from the process's
// WorkerPool for one run() only, so a strategy that is never destroyed holds none between steps.
// The first failure is rethrown to the caller; the failing thread calls `abort_peers` at once so
// that replicas waiting for it in a collective are released (they throw detail::ReplicaAborted,
// which is not reported) instead of waiting forever.
#pragma once
#include <functional>

namespace kerascpp::distribute {

class ReplicaThreads {
 public:
  ReplicaThreads(int num_replicas, std::function<void()> abort_peers);
  ReplicaThreads(const ReplicaThreads&) = delete;
  ReplicaThreads& operator=(const ReplicaThreads&) = delete;

  // Runs job(replica) on every replica's thread in parallel; returns when all finished and
  // rethrows the first failure.
  void run(const std::function<void(int replica)>& job);

 private:
  int num_replicas_;
  std::function<void()> abort_peers_;
};

}  // namespace kerascpp::distribute
