// Dataset::bucket_by_sequence_length: elements go to the bucket their length falls in (bucket i
// holds lengths in [boundaries[i-1], boundaries[i])), and each bucket is padded-batched with its
// own batch size as soon as it is full, so a batch holds sequences of similar length and little
// padding. At the end of the input the partial buckets come out in bucket order (tf.data's
// group_by_window), unless drop_remainder.
#include <fmt/format.h>

#include <algorithm>

#include "check.hpp"
#include "data/padding.hpp"

namespace kerascpp {
namespace {

using LengthFn = std::function<std::int64_t(const Example&)>;

struct BucketConfig {
  LengthFn length;
  std::vector<std::int64_t> boundaries, batch_sizes;
  BucketOptions options;
};

class BucketIterator final : public Dataset::Iterator {
 public:
  BucketIterator(std::unique_ptr<Dataset::Iterator> input, std::shared_ptr<const BucketConfig> config)
      : input_(std::move(input)), config_(std::move(config)), buckets_(config_->batch_sizes.size()) {}

  bool next(Example& out) override {
    Example e;
    while (!input_done_) {
      if (!input_->next(e)) {
        input_done_ = true;
        break;
      }
      const std::size_t b = bucket_of(e);
      buckets_[b].push_back(std::move(e));
      if (static_cast<std::int64_t>(buckets_[b].size()) == config_->batch_sizes[b]) return emit(b, out);
    }
    for (; flushed_ < buckets_.size(); ++flushed_)
      if (!buckets_[flushed_].empty() && !config_->options.drop_remainder) return emit(flushed_++, out);
    return false;
  }

 private:
  std::size_t bucket_of(const Example& e) {
    const std::int64_t len = config_->length(e);
    const auto& bounds = config_->boundaries;
    KERASCPP_CHECK_VALUE(!config_->options.pad_to_bucket_boundary || len < bounds.back(),
                         "Dataset.bucket_by_sequence_length: element {} has length {}, not below the "
                         "last bucket boundary {}; with pad_to_bucket_boundary every length must be "
                         "(filter longer ones out or add a boundary)",
                         index_, len, bounds.back());
    ++index_;
    return static_cast<std::size_t>(std::upper_bound(bounds.begin(), bounds.end(), len) - bounds.begin());
  }

  bool emit(std::size_t b, Example& out) {
    std::vector<Example> batch = std::move(buckets_[b]);
    buckets_[b].clear();
    const auto& o = config_->options;
    if (o.no_padding)  // as batch(): equal shapes or an error, never silent padding
      for (std::size_t e = 1; e < batch.size(); ++e)
        for (std::size_t c = 0; c < batch[e].size() && c < batch[0].size(); ++c)
          KERASCPP_CHECK_SHAPE(batch[e][c].shape() == batch[0][c].shape(),
                               "Dataset.bucket_by_sequence_length: with no_padding every element of a "
                               "batch needs the same shape, but component {} is {} in one and {} in "
                               "another; drop no_padding to pad them",
                               c, shape_str(batch[0][c].shape()), shape_str(batch[e][c].shape()));
    detail::PadSpec spec{o.no_padding ? std::vector<Shape>{} : o.padded_shapes, o.padding_values, -1};
    if (o.pad_to_bucket_boundary) spec.unknown_dim_fill = config_->boundaries[b] - 1;
    out = detail::pad_and_stack(batch, spec, "bucket_by_sequence_length");
    return true;
  }

  std::unique_ptr<Dataset::Iterator> input_;
  std::shared_ptr<const BucketConfig> config_;
  std::vector<std::vector<Example>> buckets_;
  bool input_done_ = false;
  std::size_t flushed_ = 0;
  std::int64_t index_ = 0;
};

class BucketNode final : public detail::DatasetNode {
 public:
  BucketNode(std::shared_ptr<const detail::DatasetNode> input, BucketConfig config)
      : input_(std::move(input)), config_(std::make_shared<const BucketConfig>(std::move(config))) {}
  std::int64_t cardinality() const override {
    const std::int64_t n = input_->cardinality();
    return n == 0 || n == Dataset::kInfinite ? n : Dataset::kUnknown;
  }
  bool is_batched() const override { return true; }
  std::unique_ptr<Dataset::Iterator> make_iterator(std::uint64_t epoch) const override {
    return std::make_unique<BucketIterator>(input_->make_iterator(epoch), config_);
  }

 private:
  std::shared_ptr<const detail::DatasetNode> input_;
  std::shared_ptr<const BucketConfig> config_;
};

}  // namespace

Dataset Dataset::bucket_by_sequence_length(std::function<std::int64_t(const Example&)> element_length_func,
                                           std::vector<std::int64_t> bucket_boundaries,
                                           std::vector<std::int64_t> bucket_batch_sizes, BucketOptions options) const {
  node("bucket_by_sequence_length");  // throws for a default-constructed Dataset
  const char* op = "bucket_by_sequence_length";
  KERASCPP_CHECK_VALUE(element_length_func,
                       "Dataset.bucket_by_sequence_length: element_length_func is empty; pass a callable "
                       "returning an element's length");
  KERASCPP_CHECK_VALUE(!bucket_boundaries.empty(),
                       "Dataset.bucket_by_sequence_length: bucket_boundaries is empty; give at least one boundary");
  KERASCPP_CHECK_VALUE(
      std::is_sorted(bucket_boundaries.begin(), bucket_boundaries.end()) &&
          std::adjacent_find(bucket_boundaries.begin(), bucket_boundaries.end()) == bucket_boundaries.end(),
      "Dataset.bucket_by_sequence_length: bucket_boundaries must be strictly increasing");
  KERASCPP_CHECK_VALUE(bucket_batch_sizes.size() == bucket_boundaries.size() + 1,
                       "Dataset.bucket_by_sequence_length: {} bucket_batch_sizes for {} boundaries; "
                       "give one more batch size than boundaries (the last bucket is open-ended)",
                       bucket_batch_sizes.size(), bucket_boundaries.size());
  for (std::int64_t b : bucket_batch_sizes)
    KERASCPP_CHECK_VALUE(b >= 1, "Dataset.bucket_by_sequence_length: a batch size of {}; each must be >= 1", b);
  KERASCPP_CHECK_VALUE(!options.pad_to_bucket_boundary || !options.padded_shapes.empty(), "{}",
                       "Dataset.bucket_by_sequence_length: pad_to_bucket_boundary needs padded_shapes, with -1 on "
                       "the axes padded to the bucket's boundary, e.g. {{-1}} for 1-D token ids");
  KERASCPP_CHECK_VALUE(!options.no_padding || (!options.pad_to_bucket_boundary && options.padded_shapes.empty()),
                       "Dataset.bucket_by_sequence_length: no_padding excludes padded_shapes and "
                       "pad_to_bucket_boundary");
  detail::check_pad_spec({options.padded_shapes, options.padding_values, -1}, op);
  BucketConfig config{std::move(element_length_func), std::move(bucket_boundaries), std::move(bucket_batch_sizes),
                      std::move(options)};
  return derive(std::make_shared<BucketNode>(node_, std::move(config)));
}

}  // namespace kerascpp
