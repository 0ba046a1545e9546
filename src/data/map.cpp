// Dataset::map: applies a user function to every element.
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

class MapNode final : public detail::DatasetNode {
 public:
  MapNode(std::shared_ptr<const detail::DatasetNode> input, MapFn fn) : input_(std::move(input)), fn_(std::move(fn)) {}
  std::int64_t cardinality() const override { return input_->cardinality(); }
  bool is_batched() const override { return input_->is_batched(); }
  std::unique_ptr<Dataset::Iterator> make_iterator(std::uint64_t epoch) const override {
    return std::make_unique<MapIterator>(input_->make_iterator(epoch), fn_);
  }

 private:
  std::shared_ptr<const detail::DatasetNode> input_;
  MapFn fn_;
};

}  // namespace

Dataset Dataset::map(std::function<Example(const Example&)> fn) const {
  node("map");  // throws for a default-constructed Dataset
  if (!fn) throw ValueError("Dataset.map: the function is empty; pass a callable taking and returning an Example");
  return Dataset(std::make_shared<MapNode>(node_, std::move(fn)));
}

}  // namespace kerascpp
