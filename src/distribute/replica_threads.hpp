// ReplicaThreads: one worker thread per replica, all running the same job with their replica
// index, like the per-device threads of TensorFlow's MirroredStrategy. The first failure is
// rethrown to the caller; the failing thread calls `abort_peers` at once so that replicas
// waiting for it in a collective are released (they throw detail::ReplicaAborted, which is not
// reported) instead of waiting forever.
#pragma once
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace kerascpp::distribute {

class ReplicaThreads {
 public:
  ReplicaThreads(int num_replicas, std::function<void()> abort_peers);
  ~ReplicaThreads();
  ReplicaThreads(const ReplicaThreads&) = delete;
  ReplicaThreads& operator=(const ReplicaThreads&) = delete;

  // Runs job(replica) on every worker in parallel; returns when all finished and rethrows the
  // first failure.
  void run(const std::function<void(int replica)>& job);

 private:
  void worker_loop(int replica);

  std::function<void()> abort_peers_;
  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable work_cv_, done_cv_;
  const std::function<void(int)>* job_ = nullptr;
  std::size_t job_generation_ = 0;
  int pending_ = 0;
  bool stopping_ = false;
  std::exception_ptr first_error_;
};

}  // namespace kerascpp::distribute
