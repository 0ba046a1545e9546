// TFRecordDataset: one element per record of each file.
#include "data/byte_stream.hpp"
#include "data/file_source.hpp"
#include "data/tfrecord_reader.hpp"
#include "kerascpp/data/bytes.hpp"
#include "kerascpp/data/tfrecord.hpp"

namespace kerascpp::data {
namespace {

class RecordReader final : public detail::ElementReader {
 public:
  RecordReader(const std::string& path, detail::Compression c) : reader_(path, c) {}
  bool next(Example& out) override {
    if (!reader_.next(record_)) return false;
    out.assign(1, bytes_tensor(record_));
    return true;
  }

 private:
  detail::TFRecordReader reader_;
  std::string record_;
};

}  // namespace

Dataset TFRecordDataset(std::vector<std::string> filenames, TFRecordOptions options) {
  const detail::Compression c = detail::parse_compression(options.compression_type, "TFRecordDataset");
  return detail::make_file_source(std::move(filenames),
                                  [c](const std::string& path) { return std::make_unique<RecordReader>(path, c); });
}

}  // namespace kerascpp::data
