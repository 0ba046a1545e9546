// Dataset::shuffle: tf.data's shuffle buffer. The buffer is filled with the first buffer_size
// elements; each output is a uniformly chosen buffer slot, refilled from the input. With a
// buffer at least as large as the dataset this is a uniform random permutation.
#include <fmt/format.h>

#include <algorithm>

#include "check.hpp"
#include "data/index_op.hpp"
#include "kerascpp/core/random.hpp"

namespace kerascpp {
namespace {

// Uniform integer in [0, n) without modulo bias; the generator is the project's splitmix64,
// so the order is the same on every platform and standard library.
std::uint64_t uniform_below(Rng& rng, std::uint64_t n) {
  const std::uint64_t threshold = (0 - n) % n;  // 2^64 mod n: values below it would bias
  for (;;) {
    std::uint64_t r = rng.next_u64();
    if (r >= threshold) return r % n;
  }
}

template <class Base, class T>
class ShuffleStream final : public Base {
 public:
  ShuffleStream(std::unique_ptr<Base> input, std::int64_t buffer_size, std::size_t reserve, std::uint64_t key)
      : input_(std::move(input)), buffer_size_(static_cast<std::size_t>(buffer_size)), rng_(key) {
    buffer_.reserve(reserve);
  }

  bool next(T& out) override {
    if (!filled_) {
      filled_ = true;
      T item{};
      while (buffer_.size() < buffer_size_ && input_->next(item)) buffer_.push_back(std::move(item));
      exhausted_ = buffer_.size() < buffer_size_;
    }
    if (buffer_.empty()) return false;
    std::size_t i = static_cast<std::size_t>(uniform_below(rng_, buffer_.size()));
    out = std::move(buffer_[i]);
    T refill{};
    if (!exhausted_ && input_->next(refill)) {
      buffer_[i] = std::move(refill);
    } else {
      exhausted_ = true;
      buffer_[i] = std::move(buffer_.back());
      buffer_.pop_back();
    }
    return true;
  }

 private:
  std::unique_ptr<Base> input_;
  std::size_t buffer_size_;
  Rng rng_;
  std::vector<T> buffer_;
  bool filled_ = false;
  bool exhausted_ = false;
};

class ShuffleNode final : public detail::IndexOpNode<ShuffleNode> {
 public:
  ShuffleNode(std::shared_ptr<const detail::DatasetNode> input, std::int64_t buffer_size, std::uint64_t seed,
              bool reshuffle)
      : IndexOpNode(std::move(input)), buffer_size_(buffer_size), seed_(seed), reshuffle_(reshuffle) {}

  std::int64_t cardinality() const override { return input_->cardinality(); }

  template <class Base, class T>
  std::unique_ptr<Base> wrap(detail::OpenStream<Base> open, std::uint64_t epoch) const {
    // The order depends only on (seed, epoch): a resumed run can replay any epoch.
    std::uint64_t key = reshuffle_ ? detail::mix64(seed_ ^ detail::mix64(epoch)) : detail::mix64(seed_);
    std::int64_t n = input_->cardinality();
    // Reserve no more than the data can fill: shuffle(1 << 40) on a small set must not allocate.
    std::size_t reserve =
        static_cast<std::size_t>(n >= 0 ? std::min(n, buffer_size_) : std::min<std::int64_t>(buffer_size_, 1024));
    return std::make_unique<ShuffleStream<Base, T>>(open(epoch), buffer_size_, reserve, key);
  }

 private:
  std::int64_t buffer_size_;
  std::uint64_t seed_;
  bool reshuffle_;
};

}  // namespace

Dataset Dataset::shuffle(std::int64_t buffer_size, std::optional<std::uint64_t> seed,
                         bool reshuffle_each_iteration) const {
  node("shuffle");  // throws for a default-constructed Dataset
  KERASCPP_CHECK_VALUE(buffer_size >= 1,
                       "Dataset.shuffle: buffer_size must be >= 1, got {}; use the dataset size "
                       "(e.g. 60000) for a full shuffle",
                       buffer_size);
  std::uint64_t s = seed ? *seed : next_random_seed();
  return derive(std::make_shared<ShuffleNode>(node_, buffer_size, s, reshuffle_each_iteration));
}

}  // namespace kerascpp
