// Dataset::concatenate: one dataset's elements, then another's. Element shapes may differ (tf.data
// relaxes them to the most specific common shape), component counts and dtypes may not.
#include <fmt/format.h>

#include "check.hpp"
#include "data/dataset_node.hpp"

namespace kerascpp {
namespace {

using Node = std::shared_ptr<const detail::DatasetNode>;

class ConcatenateIterator final : public Dataset::Iterator {
 public:
  ConcatenateIterator(std::unique_ptr<Dataset::Iterator> first, Node second, std::uint64_t epoch)
      : current_(std::move(first)),
        second_(std::move(second)),
        epoch_(epoch),
        options_(detail::current_options_handle()) {}

  bool next(Example& out) override {
    for (;;) {
      if (current_->next(out)) {
        check(out);
        ++index_;
        return true;
      }
      if (!second_) return false;
      detail::OptionsScope scope(options_);  // opened now, from next(): reinstate the pipeline's
      current_ = second_->make_iterator(epoch_);
      second_.reset();
    }
  }

 private:
  void check(const Example& e) {
    if (first_.empty()) {
      for (const auto& t : e) first_.push_back(t.dtype());
      return;
    }
    bool same = e.size() == first_.size();
    for (std::size_t c = 0; same && c < e.size(); ++c) same = e[c].dtype() == first_[c];
    if (!same) {
      std::string got, want;
      for (const auto& t : e) got += std::string(got.empty() ? "" : ", ") + dtype_name(t.dtype());
      for (auto d : first_) want += std::string(want.empty() ? "" : ", ") + dtype_name(d);
      throw ValueError(
          fmt::format("Dataset.concatenate: element {} has components ({}) but the first "
                      "element had ({}); both datasets need the same component count and dtypes",
                      index_, got, want));
    }
  }

  std::unique_ptr<Dataset::Iterator> current_;
  Node second_;  // null once opened
  std::uint64_t epoch_;
  detail::PipelineSettings options_;
  std::vector<DType> first_;
  std::int64_t index_ = 0;
};

class ConcatenateNode final : public detail::DatasetNode {
 public:
  ConcatenateNode(Node first, Node second) : first_(std::move(first)), second_(std::move(second)) {}
  std::int64_t cardinality() const override {
    const std::int64_t a = first_->cardinality(), b = second_->cardinality();
    if (a == Dataset::kInfinite || b == Dataset::kInfinite) return Dataset::kInfinite;
    if (a == Dataset::kUnknown || b == Dataset::kUnknown) return Dataset::kUnknown;
    return a + b;
  }
  bool is_batched() const override { return first_->is_batched() && second_->is_batched(); }
  std::unique_ptr<Dataset::Iterator> make_iterator(std::uint64_t epoch) const override {
    return std::make_unique<ConcatenateIterator>(first_->make_iterator(epoch), second_, epoch);
  }

 private:
  Node first_, second_;
};

}  // namespace

Dataset Dataset::concatenate(const Dataset& other) const {
  node("concatenate");  // throws for a default-constructed Dataset
  KERASCPP_CHECK_STATE(other.defined(),
                       "Dataset.concatenate: the other dataset is default-constructed and holds no pipeline");
  return derive(std::make_shared<ConcatenateNode>(node_, other.node_));
}

}  // namespace kerascpp
