// Dataset::repeat: replays the input `count` times (forever for -1). Each repetition is a new
// pass with its own epoch key, so a shuffle before repeat() reshuffles every pass.
#include <fmt/format.h>

#include "check.hpp"
#include "data/index_op.hpp"

namespace kerascpp {
namespace {

template <class Base, class T>
class RepeatStream final : public Base {
 public:
  RepeatStream(detail::OpenStream<Base> open, std::int64_t count, std::uint64_t epoch)
      : open_(std::move(open)), count_(count), epoch_(epoch) {}

  bool next(T& out) override {
    for (;;) {
      if (!current_) {
        if (count_ >= 0 && pass_ >= count_) return false;
        // Pass 0 keeps the caller's epoch so that repeat(1) is the identity.
        std::uint64_t key =
            pass_ == 0 ? epoch_ : detail::mix64(detail::mix64(epoch_) ^ static_cast<std::uint64_t>(pass_));
        current_ = open_(key);
        produced_ = false;
      }
      if (current_->next(out)) {
        produced_ = true;
        return true;
      }
      current_.reset();
      ++pass_;
      // An empty pass means every pass is empty: stop instead of spinning forever (as tf.data).
      if (!produced_) return false;
    }
  }

 private:
  detail::OpenStream<Base> open_;
  std::int64_t count_;
  std::uint64_t epoch_;
  std::int64_t pass_ = 0;
  bool produced_ = false;
  std::unique_ptr<Base> current_;
};

class RepeatNode final : public detail::IndexOpNode<RepeatNode> {
 public:
  RepeatNode(std::shared_ptr<const detail::DatasetNode> input, std::int64_t count)
      : IndexOpNode(std::move(input)), count_(count) {}

  std::int64_t cardinality() const override {
    std::int64_t n = input_->cardinality();
    if (count_ < 0) return n == 0 ? 0 : Dataset::kInfinite;
    if (count_ == 0) return 0;
    if (n < 0) return n;
    return n * count_;
  }

  template <class Base, class T>
  std::unique_ptr<Base> wrap(detail::OpenStream<Base> open, std::uint64_t epoch) const {
    return std::make_unique<RepeatStream<Base, T>>(std::move(open), count_, epoch);
  }

 private:
  std::int64_t count_;
};

}  // namespace

Dataset Dataset::repeat(std::int64_t count) const {
  node("repeat");  // throws for a default-constructed Dataset
  KERASCPP_CHECK_VALUE(count >= -1, "Dataset.repeat: count must be >= 0, or -1 to repeat forever; got {}", count);
  return derive(std::make_shared<RepeatNode>(node_, count));
}

}  // namespace kerascpp
