// A reusable barrier for replica threads that can be aborted: when one replica fails, the
// others waiting in (or later reaching) a collective are released with ReplicaAborted instead
// of waiting forever.
#pragma once
#include <condition_variable>
#include <mutex>
#include <stdexcept>

namespace kerascpp::detail {

struct ReplicaAborted : std::runtime_error {
  ReplicaAborted() : std::runtime_error("another replica failed") {}
};

class AbortableBarrier {
 public:
  explicit AbortableBarrier(int parties) : parties_(parties) {}
  void arrive_and_wait() {
    std::unique_lock lock(mu_);
    if (aborted_) throw ReplicaAborted();
    std::size_t gen = generation_;
    if (++arrived_ == parties_) {
      arrived_ = 0;
      ++generation_;
      cv_.notify_all();
      return;
    }
    cv_.wait(lock, [&] { return generation_ != gen || aborted_; });
    if (generation_ == gen) throw ReplicaAborted();
  }
  void abort() {
    std::lock_guard lock(mu_);
    aborted_ = true;
    cv_.notify_all();
  }
  void reset() {
    std::lock_guard lock(mu_);
    aborted_ = false;
    arrived_ = 0;
    ++generation_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int parties_;
  int arrived_ = 0;
  std::size_t generation_ = 0;
  bool aborted_ = false;
};

}  // namespace kerascpp::detail
