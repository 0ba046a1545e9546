// Dataset::prefetch: a producer thread runs the input pipeline ahead of the consumer into a
// bounded queue, so that data preparation overlaps the training step.
#include <fmt/format.h>

#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <utility>

#include "check.hpp"
#include "data/autotune.hpp"
#include "data/dataset_node.hpp"

namespace kerascpp {
namespace {

class PrefetchIterator final : public Dataset::Iterator {
 public:
  PrefetchIterator(std::unique_ptr<Dataset::Iterator> input, std::int64_t buffer_size)
      : input_(std::move(input)), capacity_(buffer_size) {
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
    if (queue_.empty() && !done_) {
      capacity_.starved(filled_since_starved_, last_bytes_);
      filled_since_starved_ = false;
    }
    not_empty_.wait(lock, [this] { return !queue_.empty() || done_; });
    if (!queue_.empty()) {
      last_bytes_ = detail::example_bytes(queue_.front());
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
        not_full_.wait(lock, [this] { return stop_ || queue_.size() < capacity_.value(); });
        if (stop_) break;
        queue_.push_back(std::move(e));
        if (queue_.size() >= capacity_.value()) filled_since_starved_ = true;
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
  detail::BufferTuner capacity_;              // under mu_
  bool filled_since_starved_ = false;         // under mu_
  std::size_t last_bytes_ = 0;                // under mu_
  std::mutex mu_;
  std::condition_variable not_full_, not_empty_;
  std::deque<Example> queue_;
  bool stop_ = false, done_ = false;
  std::exception_ptr error_;
  std::thread producer_;  // declared last: started once everything above exists
};

class PrefetchNode final : public detail::DatasetNode {
 public:
  PrefetchNode(std::shared_ptr<const detail::DatasetNode> input, std::int64_t buffer_size)
      : input_(std::move(input)), buffer_size_(buffer_size) {}
  std::int64_t cardinality() const override { return input_->cardinality(); }
  bool is_batched() const override { return input_->is_batched(); }
  std::unique_ptr<Dataset::Iterator> make_iterator(std::uint64_t epoch) const override {
    return std::make_unique<PrefetchIterator>(input_->make_iterator(epoch), buffer_size_);
  }

 private:
  std::shared_ptr<const detail::DatasetNode> input_;
  std::int64_t buffer_size_;  // > 0 or AUTOTUNE
};

}  // namespace

Dataset Dataset::prefetch(std::int64_t buffer_size) const {
  node("prefetch");  // throws for a default-constructed Dataset
  KERASCPP_CHECK_VALUE(buffer_size >= kAutotune,
                       "Dataset.prefetch: buffer_size must be >= 0 or Dataset::kAutotune (-1), got {}", buffer_size);
  if (buffer_size == 0) return *this;  // tf.data: no prefetching
  return derive(std::make_shared<PrefetchNode>(node_, buffer_size));
}

}  // namespace kerascpp
