// Internal: splits CSV text into records of fields as tf.data's CsvDataset does: RFC 4180
// quoting ("a, b" holds a delimiter, "" is one quote, a quoted field may span lines), records
// ended by "\n", "\r\n" or "\r", and line numbers kept for the errors.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "data/byte_stream.hpp"

namespace kerascpp::detail {

struct CsvSyntax {
  char delim = ',';
  bool use_quotes = true;
};

class CsvRecordReader {
 public:
  CsvRecordReader(const std::string& path, Compression compression, CsvSyntax syntax, const char* op);
  // The next record's fields into `fields`, or false at the end of the file. A stray quote or a
  // quoted field that never closes is an IOError naming the file, line and column.
  bool next(std::vector<std::string>& fields);
  std::int64_t record_line() const { return record_line_; }  // where the last record began, from 1
  // Throws IOError "<op>: file '<path>', line <line>, column <column>: <what>".
  [[noreturn]] void fail(std::int64_t line, std::size_t column, const std::string& what) const;

 private:
  // Consumes a line break that starts with c ('\n', or '\r' and a '\n' after it).
  void end_line(int c);

  std::string path_;
  CsvSyntax syntax_;
  const char* op_;
  BufferedInput in_;
  std::int64_t line_ = 1;
  std::int64_t record_line_ = 0;
};

}  // namespace kerascpp::detail
