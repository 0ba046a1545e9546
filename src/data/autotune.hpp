// Internal: the AUTOTUNE controllers of map/interleave parallelism and prefetch buffers.
//
// tf.data's autotuner models the whole pipeline; these are two local rules, measured where the
// consumer asks for an element (the throughput that matters is the consumer's):
//  - parallelism: starts at 1 and, over windows of kWindow requests, grows by one while the
//    consumer had to wait for a result in the window (the calls in flight do not keep up), up to
//    the TaskPool's size; it shrinks by one when every request of two windows in a row found at
//    least two results ready (one call fewer would still keep up), freeing cores for training.
//  - prefetch buffer: starts at 2 elements and grows by one each time the consumer finds the
//    queue empty after the producer had filled it (bursty production a bigger buffer absorbs),
//    up to 16 elements and a memory budget of 256 MB of queued elements.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "kerascpp/data/dataset.hpp"

namespace kerascpp::detail {

class ParallelismTuner {
 public:
  static constexpr int kWindow = 8;

  // requested: N > 0 (fixed) or AUTOTUNE; limit: the most an AUTOTUNE value may reach.
  ParallelismTuner(std::int64_t requested, int limit)
      : autotune_(requested == AUTOTUNE), limit_(std::max(1, limit)), value_(autotune_ ? 1 : requested) {}

  std::int64_t value() const { return value_; }

  // One consumer request: whether it found no result ready (and so waits), and how many were.
  void record(bool waited, std::size_t ready) {
    if (!autotune_) return;
    waits_ += waited ? 1 : 0;
    min_ready_ = std::min(min_ready_, ready);
    if (++requests_ < kWindow) return;
    if (waits_ > 0) {
      if (value_ < limit_) ++value_;
      ahead_windows_ = 0;
    } else if (min_ready_ >= 2 && ++ahead_windows_ >= 2) {
      if (value_ > 1) --value_;
      ahead_windows_ = 0;
    }
    requests_ = waits_ = 0;
    min_ready_ = SIZE_MAX;
  }

 private:
  bool autotune_;
  std::int64_t limit_, value_;
  int requests_ = 0, waits_ = 0, ahead_windows_ = 0;
  std::size_t min_ready_ = SIZE_MAX;
};

class BufferTuner {
 public:
  static constexpr std::size_t kStart = 2, kMaxElements = 16, kMaxBytes = std::size_t{256} << 20;

  explicit BufferTuner(std::int64_t requested)
      : autotune_(requested == AUTOTUNE), value_(autotune_ ? kStart : static_cast<std::size_t>(requested)) {}

  std::size_t value() const { return value_; }

  // The consumer found the queue empty; `was_full` says whether the producer had filled it since
  // the last time, `element_bytes` what one queued element holds.
  void starved(bool was_full, std::size_t element_bytes) {
    if (!autotune_ || !was_full) return;
    const std::size_t by_memory = std::max<std::size_t>(kStart, kMaxBytes / std::max<std::size_t>(1, element_bytes));
    if (value_ < std::min(kMaxElements, by_memory)) ++value_;
  }

 private:
  bool autotune_;
  std::size_t value_;
};

// The bytes an element's tensors hold (what a buffered element costs in memory).
inline std::size_t example_bytes(const Example& e) {
  std::size_t n = 0;
  for (const auto& t : e) n += t.nbytes();
  return n;
}

}  // namespace kerascpp::detail
