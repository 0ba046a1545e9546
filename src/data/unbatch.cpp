// Dataset::unbatch: each element's rows along axis 0 become elements of their own.
#include <fmt/format.h>

#include "check.hpp"
#include "data/dataset_node.hpp"

namespace kerascpp {
namespace {

class UnbatchIterator final : public Dataset::Iterator {
 public:
  explicit UnbatchIterator(std::unique_ptr<Dataset::Iterator> input) : input_(std::move(input)) {}
  bool next(Example& out) override {
    while (row_ >= rows_) {
      if (!input_->next(current_)) {
        current_.clear();
        return false;
      }
      ++index_;
      rows_ = rows_of(current_);
      row_ = 0;
    }
    out.clear();
    out.reserve(current_.size());
    for (const Tensor& t : current_) {
      Shape row_shape(t.shape().begin() + 1, t.shape().end());
      out.push_back(t.slice(row_, row_ + 1).reshape(std::move(row_shape)));  // a view, no copy
    }
    ++row_;
    return true;
  }

 private:
  std::int64_t rows_of(const Example& e) const {
    if (e.empty()) return 0;
    for (std::size_t c = 0; c < e.size(); ++c) {
      KERASCPP_CHECK_SHAPE(e[c].rank() != 0,
                           "Dataset.unbatch: element {}, component {} is a scalar; every component "
                           "needs a leading axis to split",
                           index_ - 1, c);
      KERASCPP_CHECK_SHAPE(e[c].dim(0) == e[0].dim(0),
                           "Dataset.unbatch: element {} has components of {} and {} rows "
                           "(components 0 and {}); they must have the same leading dimension",
                           index_ - 1, e[0].dim(0), e[c].dim(0), c);
    }
    return e[0].dim(0);
  }

  std::unique_ptr<Dataset::Iterator> input_;
  Example current_;
  std::int64_t rows_ = 0, row_ = 0, index_ = 0;
};

class UnbatchNode final : public detail::DatasetNode {
 public:
  explicit UnbatchNode(std::shared_ptr<const detail::DatasetNode> input) : input_(std::move(input)) {}
  std::int64_t cardinality() const override {
    const std::int64_t n = input_->cardinality();
    return n == 0 || n == Dataset::kInfinite ? n : Dataset::kUnknown;
  }
  bool is_batched() const override { return false; }
  std::unique_ptr<Dataset::Iterator> make_iterator(std::uint64_t epoch) const override {
    return std::make_unique<UnbatchIterator>(input_->make_iterator(epoch));
  }

 private:
  std::shared_ptr<const detail::DatasetNode> input_;
};

}  // namespace

Dataset Dataset::unbatch() const {
  node("unbatch");  // throws for a default-constructed Dataset
  return derive(std::make_shared<UnbatchNode>(node_));
}

}  // namespace kerascpp
