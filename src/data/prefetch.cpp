// Dataset::prefetch: a producer thread runs the input pipeline ahead of the consumer into a
// bounded queue, so that data preparation overlaps the training step.
#include <fmt/format.h>

#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <utility>

#include "data/dataset_node.hpp"

namespace kerascpp {
namespace {

// What kAutotune resolves to: two elements hide one step's worth of input latency, which is
// all a single consumer needs; more only holds memory.
constexpr std::size_t kAutotuneBuffer = 2;

class PrefetchIterator final : public Dataset::Iterator {
 public:
  PrefetchIterator(std::unique_ptr<Dataset::Iterator> input, std::size_t capacity)
      : input_(std::move(input)), capacity_(capacity) {
    producer_ = std::thread([this] { produce(); });
  }

  // Stops the producer: it exits at its next check, at the latest once its current input
  // element is done (a running map() function cannot be interrupted).
  ~PrefetchIterator() override {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    not_full_.notify_all();
    producer_.join();
  }

  bool next(Example& out) override {
    std::unique_lock lock(mu_);
    not_empty_.wait(lock, [this] { return !queue_.empty() || done_; });
    if (!queue_.empty()) {
      out = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      not_full_.notify_one();
      return true;
    }
    // Elements produced before a failure are delivered first; then the failure, once.
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
    return false;
  }

 private:
  void produce() {
    try {
      for (;;) {
        {
          std::lock_guard lock(mu_);
          if (stop_) break;
        }
        Example e;
        if (!input_->next(e)) break;
        std::unique_lock lock(mu_);
        not_full_.wait(lock, [this] { return stop_ || queue_.size() < capacity_; });
        if (stop_) break;
        queue_.push_back(std::move(e));
        lock.unlock();
        not_empty_.notify_one();
      }
    } catch (...) {
      std::lock_guard lock(mu_);
      error_ = std::current_exception();
    }
    {
      std::lock_guard lock(mu_);
      done_ = true;
    }
    not_empty_.notify_all();
  }

  std::unique_ptr<Dataset::Iterator> input_;  // used by the producer thread only
  std::size_t capacity_;
  std::mutex mu_;
  std::condition_variable not_full_, not_empty_;
  std::deque<Example> queue_;
  bool stop_ = false, done_ = false;
  std::exception_ptr error_;
  std::thread producer_;  // declared last: started once everything above exists
};

class PrefetchNode final : public detail::DatasetNode {
 public:
  PrefetchNode(std::shared_ptr<const detail::DatasetNode> input, std::size_t capacity)
      : input_(std::move(input)), capacity_(capacity) {}
  std::int64_t cardinality() const override { return input_->cardinality(); }
  bool is_batched() const override { return input_->is_batched(); }
  std::unique_ptr<Dataset::Iterator> make_iterator(std::uint64_t epoch) const override {
    return std::make_unique<PrefetchIterator>(input_->make_iterator(epoch), capacity_);
  }

 private:
  std::shared_ptr<const detail::DatasetNode> input_;
  std::size_t capacity_;
};

}  // namespace

Dataset Dataset::prefetch(std::int64_t buffer_size) const {
  node("prefetch");  // throws for a default-constructed Dataset
  if (buffer_size < kAutotune)
    throw ValueError(
        fmt::format("Dataset.prefetch: buffer_size must be >= 0 or Dataset::kAutotune (-1), got {}", buffer_size));
  if (buffer_size == 0) return *this;  // tf.data: no prefetching
  std::size_t capacity = buffer_size == kAutotune ? kAutotuneBuffer : static_cast<std::size_t>(buffer_size);
  return Dataset(std::make_shared<PrefetchNode>(node_, capacity));
}

}  // namespace kerascpp
