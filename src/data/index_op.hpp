// Internal: base for dataset ops that only decide which input elements come out, and in which
// order (shuffle, take, skip, shard, repeat). One templated stream serves both the element
// iterator and the row-index stream of the batch() fast path, so the two orders cannot drift.
#pragma once
#include <functional>
#include <memory>
#include <utility>

#include "data/dataset_node.hpp"

namespace kerascpp::detail {

// Opens a fresh input stream for the given epoch (repeat() opens one per repetition).
template <class Base>
using OpenStream = std::function<std::unique_ptr<Base>(std::uint64_t epoch)>;

// Derived provides:
//   template <class Base, class T>
//   std::unique_ptr<Base> wrap(OpenStream<Base> open, std::uint64_t epoch) const;
// with Base/T = Dataset::Iterator/Example or IndexStream/std::int64_t.
template <class Derived>
class IndexOpNode : public DatasetNode {
 public:
  explicit IndexOpNode(std::shared_ptr<const DatasetNode> input) : input_(std::move(input)) {}

  bool is_batched() const override { return input_->is_batched(); }
  const RowSource* rows() const override { return input_->rows(); }

  std::unique_ptr<Dataset::Iterator> make_iterator(std::uint64_t epoch) const override {
    auto input = input_;  // captured by value: iterators may outlive the Dataset
    return self().template wrap<Dataset::Iterator, Example>(
        [input, options = current_options_handle()](std::uint64_t e) {
          OptionsScope scope(options);  // repeat() opens its passes later, from next()
          return input->make_iterator(e);
        },
        epoch);
  }

  std::unique_ptr<IndexStream> make_index_stream(std::uint64_t epoch) const override {
    if (!input_->rows()) return nullptr;
    auto input = input_;
    return self().template wrap<IndexStream, std::int64_t>(
        [input](std::uint64_t e) { return input->make_index_stream(e); }, epoch);
  }

 protected:
  const Derived& self() const { return static_cast<const Derived&>(*this); }
  std::shared_ptr<const DatasetNode> input_;
};

}  // namespace kerascpp::detail
