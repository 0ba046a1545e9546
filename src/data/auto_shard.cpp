// data::auto_shard: one worker's part of a dataset under tf.data's auto-shard policies. DATA and
// OFF are plain dataset ops; FILE (and AUTO, which tries it) is applied while the pipeline's
// iterators are made: the file-based sources read the FileShard in force (data/file_source.cpp),
// wherever they sit, and report that they did, so AUTO knows whether to fall back to DATA.
#include "kerascpp/data/auto_shard.hpp"

#include <fmt/format.h>

#include "check.hpp"
#include "data/dataset_node.hpp"

namespace kerascpp::data {
namespace {

// FILE's message, for a pipeline it cannot split.
std::string no_file_source(std::int64_t workers) {
  return fmt::format(
      "auto-shard policy FILE: the dataset has no file-based source (TextLineDataset, TFRecordDataset, "
      "CsvDataset, cifar) to split between {} workers; use AutoShardPolicy::DATA (or AUTO) for datasets made "
      "from tensors or generators",
      workers);
}

// Decides between FILE and DATA once the pipeline's sources are open: most open when the iterator
// is made, but repeat() opens its first pass with the first element, so the decision waits for
// it. Under AUTO without a file to split, that first element is dropped with its iterator and the
// DATA-sharded pipeline starts over.
class FileShardIterator final : public Dataset::Iterator {
 public:
  FileShardIterator(std::unique_ptr<Dataset::Iterator> it, std::shared_ptr<const detail::FileShard> shard,
                    Dataset data_sharded, std::uint64_t epoch)
      : it_(std::move(it)), shard_(std::move(shard)), data_sharded_(std::move(data_sharded)), epoch_(epoch) {}

  bool next(Example& out) override {
    if (decided_) return it_->next(out);
    const bool got = it_->next(out);
    decided_ = true;
    if (shard_->found->load() && !shard_->too_few->load()) return got;
    KERASCPP_CHECK_VALUE(data_sharded_.defined(), "{}", no_file_source(shard_->num_shards));
    it_ = data_sharded_.make_iterator(epoch_);
    return it_->next(out);
  }

 private:
  std::unique_ptr<Dataset::Iterator> it_;
  std::shared_ptr<const detail::FileShard> shard_;
  Dataset data_sharded_;
  std::uint64_t epoch_;
  bool decided_ = false;
};

class FileShardNode final : public detail::DatasetNode {
 public:
  // `data_sharded`: the same pipeline DATA-sharded, AUTO's fallback (undefined under FILE).
  FileShardNode(Dataset input, Dataset data_sharded, std::int64_t num_shards, std::int64_t index)
      : input_(std::move(input)), data_sharded_(std::move(data_sharded)), num_shards_(num_shards), index_(index) {}

  // A known count means no file source (theirs is unknown), so AUTO shards by DATA.
  std::int64_t cardinality() const override {
    const std::int64_t n = input_.cardinality();
    if (n == Dataset::kInfinite || n == 0) return n;
    return n > 0 && data_sharded_.defined() ? data_sharded_.cardinality() : Dataset::kUnknown;
  }
  bool is_batched() const override { return input_.is_batched(); }

  std::unique_ptr<Dataset::Iterator> make_iterator(std::uint64_t epoch) const override {
    auto shard = std::make_shared<detail::FileShard>();
    shard->num_shards = num_shards_;
    shard->index = index_;
    shard->required = !data_sharded_.defined();
    detail::OptionsScope scope({detail::current_options_handle().options, shard});
    return std::make_unique<FileShardIterator>(input_.make_iterator(epoch), shard, data_sharded_, epoch);
  }

 private:
  Dataset input_, data_sharded_;
  std::int64_t num_shards_, index_;
};

}  // namespace

Dataset auto_shard(const Dataset& dataset, std::int64_t num_workers, std::int64_t worker_index) {
  KERASCPP_CHECK_VALUE(dataset.defined(),
                       "auto_shard: the Dataset is default-constructed and holds no pipeline; pass a real one");
  KERASCPP_CHECK_VALUE(num_workers >= 1 && worker_index >= 0 && worker_index < num_workers,
                       "auto_shard: worker_index must be in [0, num_workers) and num_workers >= 1, got "
                       "worker_index {} of {}; pass the strategy's worker_index() and num_workers()",
                       worker_index, num_workers);
  const Options options = dataset.options();
  if (num_workers == 1 || options.auto_shard_policy == AutoShardPolicy::OFF) return dataset;
  if (options.auto_shard_policy == AutoShardPolicy::DATA) return dataset.shard(num_workers, worker_index);
  const Dataset data_sharded =
      options.auto_shard_policy == AutoShardPolicy::AUTO ? dataset.shard(num_workers, worker_index) : Dataset();
  return detail::make_dataset(std::make_shared<FileShardNode>(dataset, data_sharded, num_workers, worker_index))
      .with_options(options);
}

}  // namespace kerascpp::data
