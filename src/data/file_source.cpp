#include "data/file_source.hpp"

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
    return std::make_unique<FileSourceIterator>(files_, open_);
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
