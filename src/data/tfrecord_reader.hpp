// Internal: reads the records of one TFRecord file in order, checking the framing of each.
#pragma once
#include <cstdint>
#include <string>

#include "data/byte_stream.hpp"

namespace kerascpp::detail {

class TFRecordReader {
 public:
  TFRecordReader(std::string path, Compression compression, const char* op = "TFRecordDataset");
  // The next record's data into `record`, or false at the end of the file (after a whole record).
  // A bad record is an IOError naming the file, the record's index and byte offset, and what
  // was expected there.
  bool next(std::string& record);

 private:
  [[noreturn]] void fail(std::uint64_t offset, const std::string& what) const;

  std::string path_;
  Compression compression_;
  const char* op_;
  BufferedInput in_;
  std::int64_t index_ = 0;
};

}  // namespace kerascpp::detail
