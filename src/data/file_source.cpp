#include "data/file_source.hpp"

#include <fmt/format.h>

#include "check.hpp"

#include "data/dataset_node.hpp"

namespace kerascpp::detail {
namespace {

class FileSourceIterator final : public Dataset::Iterator {
 public:
  FileSourceIterator(std::shared_ptr<const std::vector<std::string>> files, OpenReader open)
      : files_(std::move(files)), open_(std::move(open)) {}

  bool next(Example& out) override {
    for (;;) {
      if (!reader_) {
        if (next_file_ == files_->size()) return false;
        // Advanced first: after an unreadable file throws, the next call goes on with the next file.
        reader_ = open_((*files_)[next_file_++]);
      }
      if (reader_->next(out)) return true;
      reader_.reset();  // closes the file before the next one opens
    }
  }

 private:
  std::shared_ptr<const std::vector<std::string>> files_;
  OpenReader open_;
  std::size_t next_file_ = 0;
  std::unique_ptr<ElementReader> reader_;
};

class FileSourceNode final : public DatasetNode {
 public:
  FileSourceNode(std::vector<std::string> files, OpenReader open)
      : files_(std::make_shared<const std::vector<std::string>>(std::move(files))), open_(std::move(open)) {}
  std::int64_t cardinality() const override { return Dataset::kUnknown; }
  bool is_batched() const override { return false; }
  std::unique_ptr<Dataset::Iterator> make_iterator(std::uint64_t /*epoch*/) const override {
    const FileShard* shard = current_file_shard();
    if (!shard) return std::make_unique<FileSourceIterator>(files_, open_);
    const auto files = static_cast<std::int64_t>(files_->size());
    KERASCPP_CHECK_VALUE(!shard->required || files >= shard->num_shards,
                         "auto-shard policy FILE: a file-based source has {} file(s) for {} workers, so some "
                         "workers would get none; give it at least one file per worker, or use "
                         "AutoShardPolicy::DATA",
                         files, shard->num_shards);
    if (files < shard->num_shards) {
      shard->too_few->store(true);
      return std::make_unique<FileSourceIterator>(files_, open_);  // AUTO reads DATA instead
    }
    // FILE auto-sharding: this worker reads files index, index + num_shards, ... (tf.data's
    // order within the list, so a sorted list splits the same way on every worker).
    auto mine = std::make_shared<std::vector<std::string>>();
    for (std::size_t i = static_cast<std::size_t>(shard->index); i < files_->size();
         i += static_cast<std::size_t>(shard->num_shards))
      mine->push_back((*files_)[i]);
    shard->found->store(true);
    return std::make_unique<FileSourceIterator>(std::move(mine), open_);
  }

 private:
  std::shared_ptr<const std::vector<std::string>> files_;
  OpenReader open_;
};

}  // namespace

Dataset make_file_source(std::vector<std::string> files, OpenReader open) {
  return make_dataset(std::make_shared<FileSourceNode>(std::move(files), std::move(open)));
}

}  // namespace kerascpp::detail
