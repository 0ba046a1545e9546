// WorkerPool: the process's one pool of replica worker threads. A strategy leases workers for the
// length of one run() and gives them back when it returns, so a strategy that is never destroyed
// (an interpreter re-running a notebook cell keeps every old Model and Strategy alive) holds no
// thread between steps, and the pool grows only to the most replicas running at the same time.
// Each replica of a run gets its own worker for the whole run (its Backend is used from one thread
// at a time); a lease takes the lowest-numbered idle workers, so a strategy used alone gets the
// same threads, and their OpenMP teams, step after step. Per-thread settings such as the OpenMP
// thread count are not carried by the worker: the CPU backend re-applies its replica's budget
// (omp_set_num_threads) on entry to every op.
#pragma once
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

namespace kerascpp::distribute {

class WorkerPool {
 public:
  // The process-wide pool. It is never destroyed: its idle threads simply end with the process,
  // so no static destructor waits on a thread that a library unloaded before it still uses.
  static WorkerPool& instance();

  // Runs task(i) for i in [0, n) at the same time, each on its own worker, and returns when all
  // have returned. `task` must not throw (ReplicaThreads catches inside it).
  void run(int n, const std::function<void(int)>& task);

  // Worker threads started so far (the most ever leased at once).
  int size();

 private:
  struct Worker;
  WorkerPool() = default;
  std::vector<Worker*> lease(int n);
  void give_back(const std::vector<Worker*>& workers);

  std::mutex mu_;
  std::vector<std::unique_ptr<Worker>> workers_;  // only grows; a Worker's address is stable
};

}  // namespace kerascpp::distribute
