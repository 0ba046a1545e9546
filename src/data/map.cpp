// Dataset::map: applies a user function to every element, in order on the consumer's thread, or
// with num_parallel_calls on the library's TaskPool (core/task_pool.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>

#include "check.hpp"
#include "core/task_pool.hpp"
#include "data/autotune.hpp"
#include "data/dataset_node.hpp"

namespace kerascpp {
namespace {

using MapFn = std::function<Example(const Example&)>;

class MapIterator final : public Dataset::Iterator {
 public:
  MapIterator(std::unique_ptr<Dataset::Iterator> input, MapFn fn) : input_(std::move(input)), fn_(std::move(fn)) {}
  bool next(Example& out) override {
    if (!input_->next(in_)) return false;
    out = fn_(in_);
    in_.clear();  // do not pin the input element's storage until the next call
    return true;
  }

 private:
  std::unique_ptr<Dataset::Iterator> input_;
  MapFn fn_;  // a copy: the iterator may outlive the Dataset
  Example in_;
};

// One element in flight: written by a pool task, read by the consumer, both under State::mu.
struct Slot {
  Example result;
  std::exception_ptr error;
  bool done = false;
};

struct State {
  std::mutex mu;
  std::condition_variable changed;
  int in_flight = 0;
};

// The consumer pulls input elements itself and hands fn(element) to the pool, keeping up to
// `parallelism` calls in flight; the slots queue in input order, so a deterministic map returns
// them in that order and a non-deterministic one returns whichever finished first. Between two
// next() calls the pool keeps working: that is the overlap with the training step.
class ParallelMapIterator final : public Dataset::Iterator {
 public:
  ParallelMapIterator(std::unique_ptr<Dataset::Iterator> input, std::shared_ptr<const MapFn> fn,
                      std::int64_t num_parallel_calls, bool deterministic)
      : input_(std::move(input)),
        fn_(std::move(fn)),
        deterministic_(deterministic),
        parallelism_(num_parallel_calls, detail::TaskPool::instance().max_threads()),
        state_(std::make_shared<State>()) {}

  // Waits for the calls in flight: fn may use state its caller frees once the iterator is gone.
  ~ParallelMapIterator() override {
    detail::TaskPool::BlockingRegion blocking;
    std::unique_lock lock(state_->mu);
    state_->changed.wait(lock, [this] { return state_->in_flight == 0; });
  }

  bool next(Example& out) override {
    fill();
    if (slots_.empty()) return false;
    std::shared_ptr<Slot> slot;
    {
      detail::TaskPool::BlockingRegion blocking;  // this may itself run on a pool thread
      std::unique_lock lock(state_->mu);
      std::size_t ready = 0;
      for (const auto& s : slots_) ready += s->done ? 1 : 0;
      const bool waited = deterministic_ ? !slots_.front()->done : ready == 0;
      parallelism_.record(waited, ready);
      state_->changed.wait(lock, [this] { return pick() != slots_.end(); });
      auto it = pick();
      slot = std::move(*it);
      slots_.erase(it);
    }
    fill();  // refill before returning, so the pool works while the caller uses this element
    if (slot->error) std::rethrow_exception(slot->error);
    out = std::move(slot->result);
    return true;
  }

 private:
  // Under state_->mu: the slot to hand out next, or end() while it is not finished.
  std::deque<std::shared_ptr<Slot>>::iterator pick() {
    if (deterministic_) return slots_.front()->done ? slots_.begin() : slots_.end();
    return std::find_if(slots_.begin(), slots_.end(), [](const auto& s) { return s->done; });
  }

  void fill() {
    while (!input_done_ && static_cast<std::int64_t>(slots_.size()) < parallelism_.value()) {
      auto slot = std::make_shared<Slot>();
      Example in;
      try {
        if (!input_->next(in)) {
          input_done_ = true;
          return;
        }
      } catch (...) {
        // The input's failure takes its place in the order; the next fill() asks it again, as a
        // sequential map would on the next call.
        slot->error = std::current_exception();
        slot->done = true;
        slots_.push_back(std::move(slot));
        return;
      }
      {
        std::lock_guard lock(state_->mu);
        ++state_->in_flight;
      }
      slots_.push_back(slot);
      detail::TaskPool::instance().submit([state = state_, fn = fn_, slot, in = std::move(in)]() mutable {
        Example result;
        std::exception_ptr error;
        try {
          result = (*fn)(in);
        } catch (...) { error = std::current_exception(); }
        in.clear();
        {
          std::lock_guard lock(state->mu);
          slot->result = std::move(result);
          slot->error = error;
          slot->done = true;
          --state->in_flight;
        }
        state->changed.notify_all();
      });
    }
  }

  std::unique_ptr<Dataset::Iterator> input_;  // used by the consumer's thread only
  std::shared_ptr<const MapFn> fn_;
  bool deterministic_;
  detail::ParallelismTuner parallelism_;
  std::shared_ptr<State> state_;
  std::deque<std::shared_ptr<Slot>> slots_;  // in input order
  bool input_done_ = false;
};

class MapNode final : public detail::DatasetNode {
 public:
  MapNode(std::shared_ptr<const detail::DatasetNode> input, MapFn fn, MapOptions options)
      : input_(std::move(input)), fn_(std::make_shared<const MapFn>(std::move(fn))), options_(options) {}
  std::int64_t cardinality() const override { return input_->cardinality(); }
  bool is_batched() const override { return input_->is_batched(); }
  std::unique_ptr<Dataset::Iterator> make_iterator(std::uint64_t epoch) const override {
    if (options_.num_parallel_calls == 0) return std::make_unique<MapIterator>(input_->make_iterator(epoch), *fn_);
    return std::make_unique<ParallelMapIterator>(input_->make_iterator(epoch), fn_, options_.num_parallel_calls,
                                                 detail::resolve_deterministic(options_.deterministic));
  }

 private:
  std::shared_ptr<const detail::DatasetNode> input_;
  std::shared_ptr<const MapFn> fn_;
  MapOptions options_;
};

}  // namespace

Dataset Dataset::map(std::function<Example(const Example&)> fn) const { return map(std::move(fn), MapOptions{}); }

Dataset Dataset::map(std::function<Example(const Example&)> fn, MapOptions options) const {
  node("map");  // throws for a default-constructed Dataset
  KERASCPP_CHECK_VALUE(fn, "Dataset.map: the function is empty; pass a callable taking and returning an Example");
  KERASCPP_CHECK_VALUE(options.num_parallel_calls >= AUTOTUNE,
                       "Dataset.map: num_parallel_calls must be >= 0 or AUTOTUNE (-1), got {}",
                       options.num_parallel_calls);
  return derive(std::make_shared<MapNode>(node_, std::move(fn), options));
}

}  // namespace kerascpp
