// Dataset::filter: the elements for which a predicate holds.
#include "check.hpp"
#include "data/dataset_node.hpp"

namespace kerascpp {
namespace {

using Predicate = std::function<bool(const Example&)>;

class FilterIterator final : public Dataset::Iterator {
 public:
  FilterIterator(std::unique_ptr<Dataset::Iterator> input, Predicate keep)
      : input_(std::move(input)), keep_(std::move(keep)) {}
  bool next(Example& out) override {
    while (input_->next(out))
      if (keep_(out)) return true;
    return false;
  }

 private:
  std::unique_ptr<Dataset::Iterator> input_;
  Predicate keep_;
};

class FilterNode final : public detail::DatasetNode {
 public:
  FilterNode(std::shared_ptr<const detail::DatasetNode> input, Predicate keep)
      : input_(std::move(input)), keep_(std::move(keep)) {}
  // tf.data: unknown, but an empty or endless input stays what it is.
  std::int64_t cardinality() const override {
    const std::int64_t n = input_->cardinality();
    return n == 0 || n == Dataset::kInfinite ? n : Dataset::kUnknown;
  }
  bool is_batched() const override { return input_->is_batched(); }
  std::unique_ptr<Dataset::Iterator> make_iterator(std::uint64_t epoch) const override {
    return std::make_unique<FilterIterator>(input_->make_iterator(epoch), keep_);
  }

 private:
  std::shared_ptr<const detail::DatasetNode> input_;
  Predicate keep_;
};

}  // namespace

Dataset Dataset::filter(std::function<bool(const Example&)> predicate) const {
  node("filter");  // throws for a default-constructed Dataset
  KERASCPP_CHECK_VALUE(predicate, "Dataset.filter: the predicate is empty; pass a callable returning bool");
  return derive(std::make_shared<FilterNode>(node_, std::move(predicate)));
}

}  // namespace kerascpp
