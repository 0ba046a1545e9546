// Dataset::take and Dataset::skip: the first n elements, or all but the first n.
#include <fmt/format.h>

#include <algorithm>

#include "check.hpp"
#include "data/index_op.hpp"

namespace kerascpp {
namespace {

template <class Base, class T>
class TakeStream final : public Base {
 public:
  TakeStream(std::unique_ptr<Base> input, std::int64_t n) : input_(std::move(input)), left_(n) {}
  bool next(T& out) override {
    if (left_ == 0) return false;  // never pulls past n: take() on an endless input ends
    if (!input_->next(out)) return false;
    if (left_ > 0) --left_;
    return true;
  }

 private:
  std::unique_ptr<Base> input_;
  std::int64_t left_;  // -1: no limit
};

template <class Base, class T>
class SkipStream final : public Base {
 public:
  SkipStream(std::unique_ptr<Base> input, std::int64_t n) : input_(std::move(input)), to_skip_(n) {}
  bool next(T& out) override {
    while (to_skip_ != 0) {
      if (!input_->next(out)) return false;
      if (to_skip_ > 0) --to_skip_;
    }
    return input_->next(out);
  }

 private:
  std::unique_ptr<Base> input_;
  std::int64_t to_skip_;  // -1: everything
};

class TakeNode final : public detail::IndexOpNode<TakeNode> {
 public:
  TakeNode(std::shared_ptr<const detail::DatasetNode> input, std::int64_t n) : IndexOpNode(std::move(input)), n_(n) {}
  std::int64_t cardinality() const override {
    std::int64_t in = input_->cardinality();
    if (in == Dataset::kUnknown) return in;
    if (n_ < 0) return in;
    if (in == Dataset::kInfinite) return n_;
    return std::min(in, n_);
  }
  template <class Base, class T>
  std::unique_ptr<Base> wrap(detail::OpenStream<Base> open, std::uint64_t epoch) const {
    return std::make_unique<TakeStream<Base, T>>(open(epoch), n_);
  }

 private:
  std::int64_t n_;
};

class SkipNode final : public detail::IndexOpNode<SkipNode> {
 public:
  SkipNode(std::shared_ptr<const detail::DatasetNode> input, std::int64_t n) : IndexOpNode(std::move(input)), n_(n) {}
  std::int64_t cardinality() const override {
    std::int64_t in = input_->cardinality();
    if (in < 0) return in;
    if (n_ < 0) return 0;
    return std::max<std::int64_t>(0, in - n_);
  }
  template <class Base, class T>
  std::unique_ptr<Base> wrap(detail::OpenStream<Base> open, std::uint64_t epoch) const {
    return std::make_unique<SkipStream<Base, T>>(open(epoch), n_);
  }

 private:
  std::int64_t n_;
};

}  // namespace

Dataset Dataset::take(std::int64_t n) const {
  node("take");  // throws for a default-constructed Dataset
  KERASCPP_CHECK_VALUE(n >= -1, "Dataset.take: n must be >= 0, or -1 for all elements; got {}", n);
  return derive(std::make_shared<TakeNode>(node_, n));
}

Dataset Dataset::skip(std::int64_t n) const {
  const auto& input = node("skip");
  KERASCPP_CHECK_VALUE(n >= -1, "Dataset.skip: n must be >= 0, or -1 for all elements; got {}", n);
  KERASCPP_CHECK_VALUE(n != -1 || input.cardinality() != kInfinite,
                       "Dataset.skip(-1) on an endless dataset would never return; skip a finite number, or "
                       "apply take() before repeat()");
  return derive(std::make_shared<SkipNode>(node_, n));
}

}  // namespace kerascpp
