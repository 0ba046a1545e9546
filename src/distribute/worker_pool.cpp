#include "distribute/worker_pool.hpp"

#include <thread>

namespace kerascpp::distribute {

namespace {
// What the caller of run() waits on: the number of tasks still running.
struct Batch {
  std::mutex mu;
  std::condition_variable done_cv;
  int pending = 0;
};
}  // namespace

struct WorkerPool::Worker {
  std::mutex mu;
  std::condition_variable cv;
  std::function<void()> task;  // set by run(), cleared by the worker when it finished
  bool leased = false;         // guarded by WorkerPool::mu_
  std::thread thread;

  void loop() {
    for (;;) {
      std::function<void()> t;
      {
        std::unique_lock lock(mu);
        cv.wait(lock, [&] { return static_cast<bool>(task); });
        t = std::move(task);
        task = nullptr;
      }
      t();
    }
  }
};

WorkerPool& WorkerPool::instance() {
  static WorkerPool* pool = new WorkerPool;  // deliberately never deleted (see the header)
  return *pool;
}

int WorkerPool::size() {
  std::lock_guard lock(mu_);
  return static_cast<int>(workers_.size());
}

std::vector<WorkerPool::Worker*> WorkerPool::lease(int n) {
  std::vector<Worker*> out;
  std::lock_guard lock(mu_);
  for (auto& w : workers_) {
    if (static_cast<int>(out.size()) == n) break;
    if (!w->leased) out.push_back(w.get());
  }
  while (static_cast<int>(out.size()) < n) {
    auto worker = std::make_unique<Worker>();
    Worker* w = worker.get();
    // Started before it joins the pool: if the thread cannot be made, no threadless worker stays.
    w->thread = std::thread([w] { w->loop(); });
    w->thread.detach();  // the pool lives as long as the process; nothing ever joins
    workers_.push_back(std::move(worker));
    out.push_back(w);
  }
  for (Worker* w : out) w->leased = true;
  return out;
}

void WorkerPool::give_back(const std::vector<Worker*>& workers) {
  std::lock_guard lock(mu_);
  for (Worker* w : workers) w->leased = false;
}

void WorkerPool::run(int n, const std::function<void(int)>& task) {
  std::vector<Worker*> workers = lease(n);
  Batch batch;
  batch.pending = n;
  for (int i = 0; i < n; ++i) {
    Worker* w = workers[static_cast<std::size_t>(i)];
    {
      std::lock_guard lock(w->mu);
      w->task = [&task, &batch, i] {
        task(i);
        std::lock_guard done(batch.mu);
        if (--batch.pending == 0) batch.done_cv.notify_all();
      };
    }
    w->cv.notify_one();
  }
  {
    std::unique_lock lock(batch.mu);
    batch.done_cv.wait(lock, [&] { return batch.pending == 0; });
  }
  give_back(workers);
}

}  // namespace kerascpp::distribute
