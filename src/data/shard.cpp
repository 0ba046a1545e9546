// Dataset::shard: every num_shards-th element starting at `index`, so that workers each read
// a disjoint part of the data (MultiWorkerMirroredStrategy's auto-sharding by data).
#include <fmt/format.h>

#include "check.hpp"
#include "data/index_op.hpp"

namespace kerascpp {
namespace {

template <class Base, class T>
class ShardStream final : public Base {
 public:
  ShardStream(std::unique_ptr<Base> input, std::int64_t num_shards, std::int64_t index)
      : input_(std::move(input)), num_shards_(num_shards), index_(index) {}
  bool next(T& out) override {
    while (input_->next(out))
      if (position_++ % num_shards_ == index_) return true;
    return false;
  }

 private:
  std::unique_ptr<Base> input_;
  std::int64_t num_shards_;
  std::int64_t index_;
  std::int64_t position_ = 0;
};

class ShardNode final : public detail::IndexOpNode<ShardNode> {
 public:
  ShardNode(std::shared_ptr<const detail::DatasetNode> input, std::int64_t num_shards, std::int64_t index)
      : IndexOpNode(std::move(input)), num_shards_(num_shards), index_(index) {}
  std::int64_t cardinality() const override {
    std::int64_t n = input_->cardinality();
    if (n < 0) return n;
    return n / num_shards_ + (index_ < n % num_shards_ ? 1 : 0);
  }
  template <class Base, class T>
  std::unique_ptr<Base> wrap(detail::OpenStream<Base> open, std::uint64_t epoch) const {
    return std::make_unique<ShardStream<Base, T>>(open(epoch), num_shards_, index_);
  }

 private:
  std::int64_t num_shards_;
  std::int64_t index_;
};

}  // namespace

Dataset Dataset::shard(std::int64_t num_shards, std::int64_t index) const {
  node("shard");  // throws for a default-constructed Dataset
  KERASCPP_CHECK_VALUE(num_shards >= 1, "Dataset.shard: num_shards must be >= 1, got {}; pass the number of workers",
                       num_shards);
  KERASCPP_CHECK_VALUE(index >= 0 && index < num_shards,
                       "Dataset.shard: index must be in [0, {}), got {}; pass this worker's rank", num_shards, index);
  return derive(std::make_shared<ShardNode>(node_, num_shards, index));
}

}  // namespace kerascpp
