// TaskPool: the process's one pool for short background tasks, today the dataset pipeline's
// parallel map() and interleave(). Every pipeline shares it, so two parallel maps (train and
// validation data, say) together never run more threads than it has.
//
// Why its own pool and not distribute::WorkerPool: that pool leases one dedicated thread per
// replica for a whole run() and blocks until every replica returns; data tasks are many, short
// and independent, so they need a queue. Its size is the training's CPU thread budget (the
// cores this process may run on, capped by KERASCPP_MAX_THREADS as the CPU backend's is): data
// work can use the cores a step leaves idle but never outnumbers them. Its threads block (they
// never spin) when the queue is empty, and while they do run beside a training step the thread
// governor (distribute/thread_governor.hpp) sees this process's threads wait on the run queue
// and gives the step fewer OpenMP threads, so the two do not oversubscribe the cores.
#pragma once
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace kerascpp::detail {

class TaskPool {
 public:
  // The process-wide pool. Never destroyed (as WorkerPool): idle threads end with the process.
  static TaskPool& instance();

  // A pool of at most max_threads threads, started as tasks arrive (tests make small ones).
  explicit TaskPool(int max_threads);
  TaskPool(const TaskPool&) = delete;
  TaskPool& operator=(const TaskPool&) = delete;
  ~TaskPool();  // finishes queued tasks, then joins

  // Queues task; it runs on a pool thread. It must not throw (callers catch inside it).
  void submit(std::function<void()> task);

  int max_threads() const { return max_threads_; }

  // Wrap every wait for another task's result in one. On a pool thread it counts the thread as
  // blocked and starts a substitute when tasks are queued and no thread is free: a task that
  // waits for tasks queued behind it (an interleave whose inputs run a parallel map) would
  // otherwise deadlock a full pool. The threads running tasks stay at most max_threads.
  class BlockingRegion {
   public:
    BlockingRegion();
    ~BlockingRegion();
    BlockingRegion(const BlockingRegion&) = delete;
    BlockingRegion& operator=(const BlockingRegion&) = delete;

   private:
    TaskPool* pool_;  // the pool whose thread this is, or null (nothing to do)
  };

 private:
  void work();
  void grow_if_needed();  // under mu_

  const int max_threads_;
  std::mutex mu_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> queue_;
  std::vector<std::thread> threads_;
  int idle_ = 0;
  int blocked_ = 0;  // threads inside a BlockingRegion
  bool stop_ = false;
};

// The cores this process may run on (its CPU affinity), capped by KERASCPP_MAX_THREADS.
int available_cores();

}  // namespace kerascpp::detail
