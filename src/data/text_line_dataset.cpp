// TextLineDataset: one element per line of each file.
#include "kerascpp/data/text_line_dataset.hpp"

#include "data/byte_stream.hpp"
#include "data/file_source.hpp"
#include "kerascpp/data/bytes.hpp"

namespace kerascpp::data {
namespace {

constexpr const char* kTextLineDatasetOp = "TextLineDataset";

class LineReader final : public detail::ElementReader {
 public:
  LineReader(const std::string& path, detail::Compression c)
      : in_(detail::open_byte_stream(path, c, kTextLineDatasetOp)) {}
  bool next(Example& out) override {
    if (!in_.read_line(line_)) return false;
    if (!line_.empty() && line_.back() == '\r') line_.pop_back();  // "\r\n" endings, as tf.data
    out.assign(1, bytes_tensor(line_));
    return true;
  }

 private:
  detail::BufferedInput in_;
  std::string line_;
};

}  // namespace

Dataset TextLineDataset(std::vector<std::string> filenames, TextLineOptions options) {
  const detail::Compression c = detail::parse_compression(options.compression_type, kTextLineDatasetOp);
  return detail::make_file_source(std::move(filenames),
                                  [c](const std::string& path) { return std::make_unique<LineReader>(path, c); });
}

}  // namespace kerascpp::data
