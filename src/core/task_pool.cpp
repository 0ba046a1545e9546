#include "core/task_pool.hpp"

#include <sched.h>

#include <algorithm>
#include <cstdlib>

#include "core/knobs.hpp"

namespace kerascpp::detail {

int available_cores() {
  int cores = 0;
#ifdef __linux__
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) cores = CPU_COUNT(&set);  // taskset, cgroups cpusets
#endif
  if (cores <= 0) cores = static_cast<int>(std::thread::hardware_concurrency());
  if (const char* cap = knob("KERASCPP_MAX_THREADS")) {
    int c = std::atoi(cap);
    if (c > 0 && c < cores) cores = c;
  }
  return std::max(1, cores);
}

namespace {
thread_local TaskPool* t_pool = nullptr;  // the pool the current thread works for
}

TaskPool& TaskPool::instance() {
  static TaskPool* pool = new TaskPool(available_cores());  // leaked on purpose, see the header
  return *pool;
}

TaskPool::TaskPool(int max_threads) : max_threads_(std::max(1, max_threads)) {}

TaskPool::~TaskPool() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  ready_.notify_all();
  for (auto& t : threads_) t.join();
}

void TaskPool::submit(std::function<void()> task) {
  {
    std::lock_guard lock(mu_);
    queue_.push_back(std::move(task));
    grow_if_needed();
  }
  ready_.notify_one();
}

void TaskPool::grow_if_needed() {
  // A thread more only when none is idle to take the queued tasks: the pool grows to the most
  // tasks ever queued at once, with at most max_threads_ of its threads not blocked.
  if (idle_ < static_cast<int>(queue_.size()) && static_cast<int>(threads_.size()) - blocked_ < max_threads_)
    threads_.emplace_back([this] { work(); });
}

TaskPool::BlockingRegion::BlockingRegion() : pool_(t_pool) {
  if (!pool_) return;
  {
    std::lock_guard lock(pool_->mu_);
    ++pool_->blocked_;
    pool_->grow_if_needed();
  }
  pool_->ready_.notify_one();
}

TaskPool::BlockingRegion::~BlockingRegion() {
  if (!pool_) return;
  std::lock_guard lock(pool_->mu_);
  --pool_->blocked_;
}

void TaskPool::work() {
  t_pool = this;
  std::unique_lock lock(mu_);
  for (;;) {
    ++idle_;
    ready_.wait(lock, [this] { return stop_ || !queue_.empty(); });
    --idle_;
    if (queue_.empty()) return;  // stopping, nothing left
    auto task = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    task();
    lock.lock();
  }
}

}  // namespace kerascpp::detail
