// Internal: the bytes of one input file, decompressed when it is one GZIP or ZLIB stream, read
// through a buffer. Shared by the file sources (text lines, TFRecords, CSV), which read a file a
// buffer at a time and never hold more of it than one element needs.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kerascpp::detail {

enum class Compression { none, gzip, zlib };

// "" → none, "GZIP" → gzip, "ZLIB" → zlib (tf.data's spellings); anything else is a ValueError
// naming `op`.
Compression parse_compression(const std::string& compression_type, const char* op);
const char* compression_name(Compression c);  // "", "GZIP", "ZLIB"

class ByteStream {
 public:
  virtual ~ByteStream() = default;
  // Reads up to n bytes into dst and returns how many; 0 only at the end of the stream.
  virtual std::size_t read(char* dst, std::size_t n) = 0;
};

// Opens `path` for `op` (named in errors): IOError when it is missing, a directory or unreadable;
// reading a damaged compressed stream is an IOError too.
std::unique_ptr<ByteStream> open_byte_stream(const std::string& path, Compression compression, const char* op);

class BufferedInput {
 public:
  explicit BufferedInput(std::unique_ptr<ByteStream> stream, std::size_t buffer_size = std::size_t{1} << 16);

  // Up to n bytes into dst; fewer only at the end of the stream.
  std::size_t read(char* dst, std::size_t n);
  // Appends up to n bytes to out; fewer only at the end of the stream.
  std::size_t append(std::string& out, std::size_t n);
  // The next byte (0-255) without consuming it, or -1 at the end.
  int peek() { return pos_ < end_ || fill() ? static_cast<unsigned char>(buf_[pos_]) : -1; }
  int get() {
    const int c = peek();
    if (c >= 0) {
      ++pos_;
      ++offset_;
    }
    return c;
  }
  // The bytes up to the next '\n' (consumed, not stored) or the end, in `line` (replaced);
  // false only when the stream was already at its end.
  bool read_line(std::string& line);
  std::uint64_t offset() const { return offset_; }  // bytes consumed so far

 private:
  bool fill();  // refills an exhausted buffer; false at the end of the stream

  std::unique_ptr<ByteStream> stream_;
  std::vector<char> buf_;
  std::size_t pos_ = 0;
  std::size_t end_ = 0;
  std::uint64_t offset_ = 0;
};

}  // namespace kerascpp::detail
