// Dataset::padded_batch: batch() for elements whose shapes differ, each padded to a common shape.
#include <fmt/format.h>

#include "check.hpp"
#include "data/padding.hpp"

namespace kerascpp {
namespace {

class PaddedBatchIterator final : public Dataset::Iterator {
 public:
  PaddedBatchIterator(std::unique_ptr<Dataset::Iterator> input, std::int64_t batch_size, bool drop_remainder,
                      std::shared_ptr<const detail::PadSpec> spec)
      : input_(std::move(input)),
        batch_size_(static_cast<std::size_t>(batch_size)),
        drop_remainder_(drop_remainder),
        spec_(std::move(spec)) {}
  bool next(Example& out) override {
    std::vector<Example> pending;
    Example e;
    while (pending.size() < batch_size_ && input_->next(e)) pending.push_back(std::move(e));
    if (pending.empty() || (drop_remainder_ && pending.size() < batch_size_)) return false;
    out = detail::pad_and_stack(pending, *spec_, "padded_batch");
    return true;
  }

 private:
  std::unique_ptr<Dataset::Iterator> input_;
  std::size_t batch_size_;
  bool drop_remainder_;
  std::shared_ptr<const detail::PadSpec> spec_;
};

class PaddedBatchNode final : public detail::DatasetNode {
 public:
  PaddedBatchNode(std::shared_ptr<const detail::DatasetNode> input, std::int64_t batch_size, bool drop_remainder,
                  detail::PadSpec spec)
      : input_(std::move(input)),
        batch_size_(batch_size),
        drop_remainder_(drop_remainder),
        spec_(std::make_shared<const detail::PadSpec>(std::move(spec))) {}
  std::int64_t cardinality() const override {
    const std::int64_t n = input_->cardinality();
    if (n < 0) return n;
    return n / batch_size_ + (!drop_remainder_ && n % batch_size_ != 0 ? 1 : 0);
  }
  bool is_batched() const override { return true; }
  std::unique_ptr<Dataset::Iterator> make_iterator(std::uint64_t epoch) const override {
    return std::make_unique<PaddedBatchIterator>(input_->make_iterator(epoch), batch_size_, drop_remainder_, spec_);
  }

 private:
  std::shared_ptr<const detail::DatasetNode> input_;
  std::int64_t batch_size_;
  bool drop_remainder_;
  std::shared_ptr<const detail::PadSpec> spec_;
};

}  // namespace

Dataset Dataset::padded_batch(std::int64_t batch_size, PaddedBatchOptions options) const {
  node("padded_batch");  // throws for a default-constructed Dataset
  KERASCPP_CHECK_VALUE(batch_size >= 1, "Dataset.padded_batch: batch_size must be >= 1, got {}", batch_size);
  detail::PadSpec spec{std::move(options.padded_shapes), std::move(options.padding_values), -1};
  detail::check_pad_spec(spec, "padded_batch");
  return derive(std::make_shared<PaddedBatchNode>(node_, batch_size, options.drop_remainder, std::move(spec)));
}

}  // namespace kerascpp
