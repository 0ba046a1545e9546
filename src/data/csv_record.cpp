#include "data/csv_record.hpp"

#include <fmt/format.h>

#include "kerascpp/error.hpp"

namespace kerascpp::detail {
namespace {

std::string printable(int c) {
  return c >= 0x20 && c < 0x7f ? fmt::format("'{}'", static_cast<char>(c)) : fmt::format("byte 0x{:02x}", c);
}

}  // namespace

CsvRecordReader::CsvRecordReader(const std::string& path, Compression compression, CsvSyntax syntax, const char* op)
    : path_(path), syntax_(syntax), op_(op), in_(open_byte_stream(path, compression, op)) {}

void CsvRecordReader::fail(std::int64_t line, std::size_t column, const std::string& what) const {
  throw IOError(fmt::format("{}: file '{}', line {}, column {}: {}", op_, path_, line, column, what));
}

void CsvRecordReader::end_line(int c) {
  if (c == '\r' && in_.peek() == '\n') in_.get();
  ++line_;
}

bool CsvRecordReader::next(std::vector<std::string>& fields) {
  if (in_.peek() < 0) return false;
  record_line_ = line_;
  const int delim = static_cast<unsigned char>(syntax_.delim);
  std::size_t n = 0;
  for (;;) {  // one field per pass
    if (fields.size() <= n) fields.emplace_back();
    std::string& field = fields[n++];
    field.clear();
    int c = 0;
    if (syntax_.use_quotes && in_.peek() == '"') {
      in_.get();
      const std::int64_t opened = line_;
      for (;;) {
        c = in_.get();
        if (c < 0)
          fail(opened, n,
               "a quoted field opens here and the file ends before its closing quote; close it (a quote "
               "inside a quoted field is written \"\")");
        if (c == '"') {
          if (in_.peek() != '"') break;  // the closing quote
          in_.get();                     // "" stands for one quote
        } else if (c == '\n' || (c == '\r' && in_.peek() != '\n')) {
          ++line_;  // a line break inside the field is data
        }
        field.push_back(static_cast<char>(c));
      }
      c = in_.get();
      if (c != delim && c != '\n' && c != '\r' && c >= 0)
        fail(line_, n,
             fmt::format("{} follows the closing quote of a quoted field; the field must end there (a quote "
                         "inside it is written \"\")",
                         printable(c)));
    } else {
      for (;;) {
        c = in_.get();
        if (c < 0 || c == delim || c == '\n' || c == '\r') break;
        if (syntax_.use_quotes && c == '"')
          fail(line_, n, "a quote inside an unquoted field; quote the whole field and write the quote as \"\"");
        field.push_back(static_cast<char>(c));
      }
    }
    if (c == delim) continue;
    if (c >= 0) end_line(c);
    fields.resize(n);
    return true;
  }
}

}  // namespace kerascpp::detail
