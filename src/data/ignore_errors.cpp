// Dataset::ignore_errors: an element whose production throws a kerascpp::Error (a bad record, an
// undecodable image, a map() that rejects its input) is skipped and counted instead of ending the
// pass. Other exceptions (std::bad_alloc, a bug's std::logic_error) still propagate.
#include <fmt/format.h>

#include <iostream>

#include "data/dataset_node.hpp"

namespace kerascpp {
namespace {

// An input that fails this many times in a row without producing an element is taken as broken
// for good (a reader stuck on the same bad bytes) and the pass ends there, rather than spinning.
constexpr std::int64_t kMaxConsecutiveErrors = 10000;

class IgnoreErrorsIterator final : public Dataset::Iterator {
 public:
  IgnoreErrorsIterator(std::unique_ptr<Dataset::Iterator> input, bool log_warning)
      : input_(std::move(input)), log_warning_(log_warning) {}
  ~IgnoreErrorsIterator() override { report(); }

  bool next(Example& out) override {
    std::int64_t in_a_row = 0;
    for (;;) {
      try {
        if (!input_->next(out)) {
          report();
          return false;
        }
        return true;
      } catch (const Error& e) {
        ++skipped_;
        if (first_.empty()) first_ = e.what();
        if (log_warning_) std::cerr << "Dataset.ignore_errors: skipping an element: " << e.what() << "\n";
        if (++in_a_row >= kMaxConsecutiveErrors) {
          std::cerr << fmt::format("Dataset.ignore_errors: the input failed {} times in a row; ending the pass\n",
                                   in_a_row);
          report();
          return false;
        }
      }
    }
  }

 private:
  // Logs the count once per pass, when the pass ends or the iterator goes away.
  void report() {
    if (reported_ || skipped_ == 0) return;
    reported_ = true;
    std::cerr << fmt::format("Dataset.ignore_errors: skipped {} element{} whose production failed; the first: {}\n",
                             skipped_, skipped_ == 1 ? "" : "s", first_);
  }

  std::unique_ptr<Dataset::Iterator> input_;
  bool log_warning_;
  std::int64_t skipped_ = 0;
  std::string first_;
  bool reported_ = false;
};

class IgnoreErrorsNode final : public detail::DatasetNode {
 public:
  IgnoreErrorsNode(std::shared_ptr<const detail::DatasetNode> input, bool log_warning)
      : input_(std::move(input)), log_warning_(log_warning) {}
  std::int64_t cardinality() const override {
    const std::int64_t n = input_->cardinality();
    return n == 0 || n == Dataset::kInfinite ? n : Dataset::kUnknown;
  }
  bool is_batched() const override { return input_->is_batched(); }
  std::unique_ptr<Dataset::Iterator> make_iterator(std::uint64_t epoch) const override {
    return std::make_unique<IgnoreErrorsIterator>(input_->make_iterator(epoch), log_warning_);
  }

 private:
  std::shared_ptr<const detail::DatasetNode> input_;
  bool log_warning_;
};

}  // namespace

Dataset Dataset::ignore_errors(bool log_warning) const {
  node("ignore_errors");  // throws for a default-constructed Dataset
  return derive(std::make_shared<IgnoreErrorsNode>(node_, log_warning));
}

}  // namespace kerascpp
