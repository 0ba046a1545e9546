// Dataset::interleave: maps each input element to a dataset and reads cycle_length of them at
// once, block_length elements from one before moving to the next, in tf.data's order: a finished
// input frees its place in the cycle, which the next input element takes when the cycle comes
// back to it. With num_parallel_calls every open input is read ahead on the TaskPool, a block at
// a time; deterministic keeps the sequential order, non-deterministic hands out an element of
// another open input while the current one has none ready.
#include <fmt/format.h>

#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <utility>

#include "check.hpp"
#include "core/task_pool.hpp"
#include "data/dataset_node.hpp"

namespace kerascpp {
namespace {

using InterleaveFn = std::function<Dataset(const Example&)>;

// One open input of the cycle.
class Source {
 public:
  virtual ~Source() = default;
  virtual bool next(Example& out) = 0;   // blocks; false at its end
  virtual bool ready() { return true; }  // next() would not block
};

class DirectSource final : public Source {
 public:
  explicit DirectSource(std::unique_ptr<Dataset::Iterator> it) : it_(std::move(it)) {}
  bool next(Example& out) override { return it_->next(out); }

 private:
  std::unique_ptr<Dataset::Iterator> it_;
};

// Reads up to `ahead` elements of its iterator on the pool, one task at a time, so the iterator
// is only ever used by one thread at once.
class ReadAheadSource final : public Source {
 public:
  ReadAheadSource(std::unique_ptr<Dataset::Iterator> it, std::size_t ahead)
      : shared_(std::make_shared<Shared>()), ahead_(ahead) {
    shared_->it = std::move(it);
    std::lock_guard lock(shared_->mu);
    schedule();
  }
  ~ReadAheadSource() override {
    detail::TaskPool::BlockingRegion blocking;
    std::unique_lock lock(shared_->mu);
    shared_->stop = true;
    shared_->changed.wait(lock, [this] { return !shared_->running; });
  }
  bool next(Example& out) override {
    detail::TaskPool::BlockingRegion blocking;  // this may itself run on a pool thread
    std::unique_lock lock(shared_->mu);
    shared_->changed.wait(lock, [this] { return !shared_->buffer.empty() || shared_->end; });
    if (shared_->buffer.empty()) {
      if (shared_->error) std::rethrow_exception(std::exchange(shared_->error, nullptr));
      return false;
    }
    out = std::move(shared_->buffer.front());
    shared_->buffer.pop_front();
    schedule();
    return true;
  }
  bool ready() override {
    std::lock_guard lock(shared_->mu);
    return !shared_->buffer.empty() || shared_->end;
  }

 private:
  struct Shared {
    std::mutex mu;
    std::condition_variable changed;
    std::unique_ptr<Dataset::Iterator> it;  // used by the running task only
    std::deque<Example> buffer;
    std::exception_ptr error;
    bool end = false, running = false, stop = false;
  };

  // Under shared_->mu: starts a task when the buffer has room and none runs.
  void schedule() {
    if (shared_->running || shared_->end || shared_->buffer.size() >= ahead_) return;
    shared_->running = true;
    detail::TaskPool::instance().submit([s = shared_, ahead = ahead_] {
      std::unique_lock lock(s->mu);
      while (!s->stop && !s->end && s->buffer.size() < ahead) {
        lock.unlock();
        Example e;
        bool got = false;
        std::exception_ptr error;
        try {
          got = s->it->next(e);
        } catch (...) { error = std::current_exception(); }
        lock.lock();
        if (got) s->buffer.push_back(std::move(e));
        else {
          s->end = true;
          s->error = error;
        }
        s->changed.notify_all();
      }
      s->running = false;
      s->changed.notify_all();
    });
  }

  std::shared_ptr<Shared> shared_;
  std::size_t ahead_;
};

struct InterleaveConfig {
  InterleaveFn fn;
  std::int64_t cycle_length, block_length;
  bool parallel;
};

class InterleaveIterator final : public Dataset::Iterator {
 public:
  InterleaveIterator(std::unique_ptr<Dataset::Iterator> input, std::shared_ptr<const InterleaveConfig> config,
                     bool deterministic, std::uint64_t epoch)
      : input_(std::move(input)),
        config_(std::move(config)),
        deterministic_(deterministic),
        epoch_(epoch),
        cycle_(static_cast<std::size_t>(config_->cycle_length)) {}

  bool next(Example& out) override {
    while (!end_of_input_ || open_ > 0) {
      auto& current = cycle_[cycle_index_];
      if (current) {
        if (!deterministic_ && !current->ready() && take_any_ready(out)) return true;
        if (current->next(out)) {
          if (++block_index_ == config_->block_length) advance();
          return true;
        }
        current.reset();
        --open_;
        advance();
      } else if (!end_of_input_) {
        open_next(current);
      } else {
        advance();
      }
    }
    return false;
  }

 private:
  void advance() {
    block_index_ = 0;
    cycle_index_ = (cycle_index_ + 1) % cycle_.size();
  }

  void open_next(std::unique_ptr<Source>& slot) {
    Example e;
    if (!input_->next(e)) {
      end_of_input_ = true;
      return;
    }
    Dataset ds = config_->fn(e);
    KERASCPP_CHECK_VALUE(ds.defined(),
                         "Dataset.interleave: the function returned a default-constructed Dataset "
                         "for input element {}; return a Dataset",
                         opened_);
    ++opened_;
    std::unique_ptr<Dataset::Iterator> it;
    {
      // An input is a pipeline of its own: an enclosing FILE auto-shard does not split its files.
      detail::OptionsScope own({nullptr, nullptr});
      it = ds.make_iterator(epoch_);
    }
    if (config_->parallel)
      slot = std::make_unique<ReadAheadSource>(std::move(it), static_cast<std::size_t>(config_->block_length));
    else slot = std::make_unique<DirectSource>(std::move(it));
    ++open_;
  }

  // Non-deterministic only: an element from another open input that has one ready.
  bool take_any_ready(Example& out) {
    for (std::size_t k = 1; k < cycle_.size(); ++k) {
      auto& slot = cycle_[(cycle_index_ + k) % cycle_.size()];
      if (slot && slot->ready()) {
        if (slot->next(out)) return true;
        slot.reset();  // it ended: its place waits for the cycle to come back
        --open_;
      }
    }
    return false;
  }

  std::unique_ptr<Dataset::Iterator> input_;
  std::shared_ptr<const InterleaveConfig> config_;
  bool deterministic_;
  std::uint64_t epoch_;
  std::vector<std::unique_ptr<Source>> cycle_;
  std::size_t cycle_index_ = 0;
  std::int64_t block_index_ = 0, open_ = 0, opened_ = 0;
  bool end_of_input_ = false;
};

class InterleaveNode final : public detail::DatasetNode {
 public:
  InterleaveNode(std::shared_ptr<const detail::DatasetNode> input, InterleaveConfig config,
                 std::optional<bool> deterministic)
      : input_(std::move(input)),
        config_(std::make_shared<const InterleaveConfig>(std::move(config))),
        deterministic_(deterministic) {}
  std::int64_t cardinality() const override {
    const std::int64_t n = input_->cardinality();
    return n == 0 ? 0 : Dataset::kUnknown;
  }
  bool is_batched() const override { return false; }
  std::unique_ptr<Dataset::Iterator> make_iterator(std::uint64_t epoch) const override {
    return std::make_unique<InterleaveIterator>(input_->make_iterator(epoch), config_,
                                                detail::resolve_deterministic(deterministic_), epoch);
  }

 private:
  std::shared_ptr<const detail::DatasetNode> input_;
  std::shared_ptr<const InterleaveConfig> config_;
  std::optional<bool> deterministic_;
};

}  // namespace

Dataset Dataset::interleave(std::function<Dataset(const Example&)> fn, InterleaveOptions options) const {
  node("interleave");  // throws for a default-constructed Dataset
  KERASCPP_CHECK_VALUE(fn, "Dataset.interleave: the function is empty; pass a callable returning a Dataset");
  KERASCPP_CHECK_VALUE(options.cycle_length != 0 && options.cycle_length >= AUTOTUNE,
                       "Dataset.interleave: cycle_length must be >= 1 or AUTOTUNE (-1), got {}", options.cycle_length);
  KERASCPP_CHECK_VALUE(options.block_length >= 1, "Dataset.interleave: block_length must be >= 1, got {}",
                       options.block_length);
  KERASCPP_CHECK_VALUE(options.num_parallel_calls >= AUTOTUNE,
                       "Dataset.interleave: num_parallel_calls must be >= 0 or AUTOTUNE (-1), got {}",
                       options.num_parallel_calls);
  // tf.data: AUTOTUNE cycle_length is the number of schedulable cores.
  const std::int64_t cycle = options.cycle_length == AUTOTUNE ? detail::available_cores() : options.cycle_length;
  InterleaveConfig config{std::move(fn), cycle, options.block_length, options.num_parallel_calls != 0};
  return derive(std::make_shared<InterleaveNode>(node_, std::move(config), options.deterministic));
}

}  // namespace kerascpp
