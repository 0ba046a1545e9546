// Dataset::cache: the first complete pass over the input is kept, in memory or in a file, and
// every later pass (epoch) replays it without touching the input. A pass that stops early leaves
// no cache behind: memory is dropped, and the file only ever appears under its name once whole.
//
// The file is a TFRecord file (the project's writer and reader: masked CRC-32C per record, a
// temporary name renamed into place) with one record per element, each element encoded by
// encode() below, and a last record that marks the end and holds the element count. It is
// kerascpp's own format: tf.data's cache files (a TensorBundle) are not read or written.
#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <mutex>

#include "check.hpp"
#include "data/dataset_node.hpp"
#include "data/tfrecord_reader.hpp"
#include "kerascpp/data/tfrecord.hpp"

namespace kerascpp {
namespace {

using Node = std::shared_ptr<const detail::DatasetNode>;
constexpr const char* kEndMarker = "kerascpp-dataset-cache-end";

// ---- memory ----

struct MemoryCache {
  std::mutex mu;
  std::shared_ptr<const std::vector<Example>> elements;  // set once a pass completed
  bool writing = false;                                  // a pass is filling it
};

class ReplayIterator final : public Dataset::Iterator {
 public:
  explicit ReplayIterator(std::shared_ptr<const std::vector<Example>> elements) : elements_(std::move(elements)) {}
  bool next(Example& out) override {
    if (i_ >= elements_->size()) return false;
    out = (*elements_)[i_++];  // tensors are shared handles: no copy of the data
    return true;
  }

 private:
  std::shared_ptr<const std::vector<Example>> elements_;
  std::size_t i_ = 0;
};

class MemoryFillIterator final : public Dataset::Iterator {
 public:
  MemoryFillIterator(std::unique_ptr<Dataset::Iterator> input, std::shared_ptr<MemoryCache> cache)
      : input_(std::move(input)), cache_(std::move(cache)) {}
  ~MemoryFillIterator() override {
    if (!finished_) {
      std::lock_guard lock(cache_->mu);
      cache_->writing = false;  // an unfinished pass: the next one fills it again
    }
  }
  bool next(Example& out) override {
    if (finished_) return false;
    if (!input_->next(out)) {
      std::lock_guard lock(cache_->mu);
      cache_->elements = std::make_shared<const std::vector<Example>>(std::move(seen_));
      cache_->writing = false;
      finished_ = true;
      return false;
    }
    seen_.push_back(out);
    return true;
  }

 private:
  std::unique_ptr<Dataset::Iterator> input_;
  std::shared_ptr<MemoryCache> cache_;
  std::vector<Example> seen_;
  bool finished_ = false;
};

class MemoryCacheNode final : public detail::DatasetNode {
 public:
  explicit MemoryCacheNode(Node input) : input_(std::move(input)), cache_(std::make_shared<MemoryCache>()) {}
  std::int64_t cardinality() const override { return input_->cardinality(); }
  bool is_batched() const override { return input_->is_batched(); }
  std::unique_ptr<Dataset::Iterator> make_iterator(std::uint64_t epoch) const override {
    {
      std::lock_guard lock(cache_->mu);
      if (cache_->elements) return std::make_unique<ReplayIterator>(cache_->elements);
      if (!cache_->writing) {
        cache_->writing = true;
        return std::make_unique<MemoryFillIterator>(input_->make_iterator(epoch), cache_);
      }
    }
    return input_->make_iterator(epoch);  // another pass is filling it: read the input as it is
  }

 private:
  Node input_;
  std::shared_ptr<MemoryCache> cache_;  // the node is immutable; the cache it fills is not
};

// ---- file ----

void put_u64(std::string& s, std::uint64_t v) { s.append(reinterpret_cast<const char*>(&v), 8); }

// component count (u32), then per component: dtype (u8), rank (u8), dims (i64 each), the bytes.
std::string encode(const Example& e) {
  std::string s;
  const auto n = static_cast<std::uint32_t>(e.size());
  s.append(reinterpret_cast<const char*>(&n), 4);
  for (const Tensor& t : e) {
    s.push_back(static_cast<char>(t.dtype()));
    s.push_back(static_cast<char>(t.rank()));
    for (std::int64_t d : t.shape()) put_u64(s, static_cast<std::uint64_t>(d));
    s.append(static_cast<const char*>(t.raw()), t.nbytes());
  }
  return s;
}

class Decoder {
 public:
  Decoder(const std::string& record, const std::string& path, std::int64_t index)
      : r_(record), path_(path), index_(index) {}
  Example decode() {
    std::uint32_t n = 0;
    take(&n, 4);
    Example e;
    for (std::uint32_t c = 0; c < n; ++c) {
      std::uint8_t dtype = 0, rank = 0;
      take(&dtype, 1);
      take(&rank, 1);
      if (dtype > static_cast<std::uint8_t>(DType::float16)) fail(fmt::format("an unknown dtype code {}", dtype));
      Shape shape(rank);
      for (auto& d : shape) {
        take(&d, 8);
        if (d < 0) fail("a negative dimension");
      }
      Tensor t(shape, static_cast<DType>(dtype));
      take(t.raw(), t.nbytes());
      e.push_back(std::move(t));
    }
    if (pos_ != r_.size()) fail("bytes after the last component");
    return e;
  }

 private:
  void take(void* dst, std::size_t n) {
    if (r_.size() - pos_ < n) fail("the record ends inside an element");
    if (n) std::memcpy(dst, r_.data() + pos_, n);
    pos_ += n;
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw IOError(
        fmt::format("Dataset.cache: '{}' element {} does not decode ({} at byte {} of its record); "
                    "the file was not written by this kerascpp's cache(): delete it to rebuild it",
                    path_, index_, what, pos_));
  }
  const std::string& r_;
  const std::string& path_;
  std::int64_t index_;
  std::size_t pos_ = 0;
};

class FileReadIterator final : public Dataset::Iterator {
 public:
  explicit FileReadIterator(std::string path)
      : path_(std::move(path)), reader_(path_, detail::Compression::none, "Dataset.cache") {}
  bool next(Example& out) override {
    if (done_) return false;
    KERASCPP_CHECK_IO(reader_.next(record_),
                      "Dataset.cache: '{}' ends after {} elements without its end record; it is not a "
                      "complete cache file: delete it to rebuild it",
                      path_, index_);
    if (record_.rfind(kEndMarker, 0) == 0) {
      done_ = true;
      return false;
    }
    out = Decoder(record_, path_, index_).decode();
    ++index_;
    return true;
  }

 private:
  std::string path_;
  detail::TFRecordReader reader_;
  std::string record_;
  std::int64_t index_ = 0;
  bool done_ = false;
};

// Hidden beside the target, unique per process and pass.
std::string partial_name(const std::filesystem::path& target) {
  static std::atomic<unsigned> counter{0};
  const std::filesystem::path dir = target.has_parent_path() ? target.parent_path() : ".";
  return (dir / fmt::format(".{}.partial.{}.{}", target.filename().string(), static_cast<long>(::getpid()), counter++))
      .string();
}

// Passes the input through and writes each element; only a completed pass renames the file onto
// the cache's name. TFRecordWriter itself writes to a temporary name and renames onto partial_
// when closed, so partial_ is whole or absent; a pass that stops early removes it.
class FileWriteIterator final : public Dataset::Iterator {
 public:
  FileWriteIterator(std::unique_ptr<Dataset::Iterator> input, std::string path)
      : input_(std::move(input)),
        path_(std::move(path)),
        partial_(partial_name(path_)),
        writer_(std::make_unique<data::TFRecordWriter>(partial_)) {}
  ~FileWriteIterator() override {
    if (!writer_) return;
    try {
      writer_->close();
    } catch (...) {  // nothing to keep either way
    }
    std::error_code ec;
    std::filesystem::remove(partial_, ec);
  }
  bool next(Example& out) override {
    if (!writer_) return false;
    if (input_->next(out)) {
      writer_->write(encode(out));
      ++count_;
      return true;
    }
    std::string end = kEndMarker;
    put_u64(end, count_);
    writer_->write(end);
    writer_->close();
    writer_.reset();
    std::error_code ec;
    std::filesystem::rename(partial_, path_, ec);
    if (ec) {
      std::filesystem::remove(partial_, ec);
      throw IOError(fmt::format("Dataset.cache: cannot move the finished cache onto '{}': {}", path_, ec.message()));
    }
    return false;
  }

 private:
  std::unique_ptr<Dataset::Iterator> input_;
  std::string path_, partial_;
  std::unique_ptr<data::TFRecordWriter> writer_;
  std::uint64_t count_ = 0;
};

class FileCacheNode final : public detail::DatasetNode {
 public:
  FileCacheNode(Node input, std::string path) : input_(std::move(input)), path_(std::move(path)) {}
  std::int64_t cardinality() const override { return input_->cardinality(); }
  bool is_batched() const override { return input_->is_batched(); }
  std::unique_ptr<Dataset::Iterator> make_iterator(std::uint64_t epoch) const override {
    std::error_code ec;
    if (std::filesystem::exists(path_, ec)) return std::make_unique<FileReadIterator>(path_);
    return std::make_unique<FileWriteIterator>(input_->make_iterator(epoch), path_);
  }

 private:
  Node input_;
  std::string path_;
};

}  // namespace

Dataset Dataset::cache(std::string filename) const {
  node("cache");  // throws for a default-constructed Dataset
  if (filename.empty()) return derive(std::make_shared<MemoryCacheNode>(node_));
  return derive(std::make_shared<FileCacheNode>(node_, std::move(filename)));
}

}  // namespace kerascpp
