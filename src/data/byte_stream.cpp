#include "data/byte_stream.hpp"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "check.hpp"
#include "kerascpp/error.hpp"

namespace kerascpp::detail {
namespace {

class FileStream final : public ByteStream {
 public:
  FileStream(const std::string& path, const char* op) : path_(path), op_(op) {
    std::error_code ec;
    KERASCPP_CHECK_IO(!std::filesystem::is_directory(path, ec),
                      "{}: '{}' is a directory; pass the files in it (list_files(\"{}/*\"))", op, path, path);
    file_ = std::fopen(path.c_str(), "rb");
    KERASCPP_CHECK_IO(file_, "{}: cannot open '{}': {}; check the path and its permissions", op, path,
                      std::strerror(errno));
  }
  ~FileStream() override { std::fclose(file_); }
  FileStream(const FileStream&) = delete;
  FileStream& operator=(const FileStream&) = delete;

  std::size_t read(char* dst, std::size_t n) override {
    const std::size_t got = std::fread(dst, 1, n, file_);
    KERASCPP_CHECK_IO(got >= n || !std::ferror(file_), "{}: reading '{}' failed: {}; check the disk", op_, path_,
                      std::strerror(errno));
    return got;
  }

 private:
  std::string path_;
  const char* op_;
  std::FILE* file_ = nullptr;
};

// One GZIP or ZLIB stream over a file; several streams one after another (as `cat a.gz b.gz`
// makes) read as their concatenation, as gzip -d does.
class InflateStream final : public ByteStream {
 public:
  InflateStream(std::unique_ptr<ByteStream> file, Compression c, std::string path, const char* op)
      : file_(std::move(file)), compression_(c), path_(std::move(path)), op_(op), in_(std::size_t{1} << 16) {
    // windowBits 15: a zlib header and trailer; +16: a gzip one instead.
    KERASCPP_CHECK_IO(inflateInit2(&z_, c == Compression::gzip ? 15 + 16 : 15) == Z_OK,
                      "{}: zlib could not start decompressing '{}' (out of memory?)", op, path_);
  }
  ~InflateStream() override { inflateEnd(&z_); }
  InflateStream(const InflateStream&) = delete;
  InflateStream& operator=(const InflateStream&) = delete;

  std::size_t read(char* dst, std::size_t n) override {
    n = std::min<std::size_t>(n, 1u << 30);  // avail_out is 32 bits
    for (;;) {
      if (z_.avail_in == 0 && !input_done_) {
        const std::size_t got = file_->read(in_.data(), in_.size());
        input_done_ = got == 0;
        z_.next_in = reinterpret_cast<Bytef*>(in_.data());
        z_.avail_in = static_cast<uInt>(got);
      }
      if (z_.avail_in == 0 && input_done_) {
        if (between_streams_) return 0;
        throw IOError(fmt::format(
            "{}: '{}' ends inside its {} stream ({} compressed bytes read): the file is truncated; re-create it", op_,
            path_, compression_name(compression_), z_.total_in + consumed_before_));
      }
      if (between_streams_) {  // more input after a complete stream: the next one starts
        consumed_before_ += z_.total_in;
        inflateReset(&z_);
        between_streams_ = false;
      }
      z_.next_out = reinterpret_cast<Bytef*>(dst);
      z_.avail_out = static_cast<uInt>(n);
      const int rc = inflate(&z_, Z_NO_FLUSH);
      const std::size_t produced = n - z_.avail_out;
      if (rc == Z_STREAM_END) {
        between_streams_ = true;
      } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
        throw IOError(fmt::format(
            "{}: '{}' is not a valid {} stream (zlib: {}, after {} compressed bytes); check compression_type "
            "(\"GZIP\" for gzip files, \"ZLIB\" for zlib streams, \"\" for plain files)",
            op_, path_, compression_name(compression_), z_.msg ? z_.msg : zError(rc), z_.total_in + consumed_before_));
      }
      if (produced > 0) return produced;
    }
  }

 private:
  std::unique_ptr<ByteStream> file_;
  Compression compression_;
  std::string path_;
  const char* op_;
  std::vector<char> in_;
  z_stream z_{};
  bool input_done_ = false;
  bool between_streams_ = true;  // an empty file is an empty stream, not a truncated one
  std::uint64_t consumed_before_ = 0;
};

}  // namespace

Compression parse_compression(const std::string& compression_type, const char* op) {
  if (compression_type.empty()) return Compression::none;
  if (compression_type == "GZIP") return Compression::gzip;
  if (compression_type == "ZLIB") return Compression::zlib;
  throw ValueError(
      fmt::format("{}: compression_type '{}' is not one of \"\" (none), \"GZIP\" or \"ZLIB\"", op, compression_type));
}

const char* compression_name(Compression c) {
  switch (c) {
    case Compression::gzip:
      return "GZIP";
    case Compression::zlib:
      return "ZLIB";
    case Compression::none:
      break;
  }
  return "";
}

std::unique_ptr<ByteStream> open_byte_stream(const std::string& path, Compression compression, const char* op) {
  auto file = std::make_unique<FileStream>(path, op);
  if (compression == Compression::none) return file;
  return std::make_unique<InflateStream>(std::move(file), compression, path, op);
}

BufferedInput::BufferedInput(std::unique_ptr<ByteStream> stream, std::size_t buffer_size)
    : stream_(std::move(stream)), buf_(buffer_size) {}

bool BufferedInput::fill() {
  pos_ = 0;
  end_ = stream_->read(buf_.data(), buf_.size());
  return end_ > 0;
}

std::size_t BufferedInput::read(char* dst, std::size_t n) {
  std::size_t done = 0;
  while (done < n && (pos_ < end_ || fill())) {
    const std::size_t k = std::min(n - done, end_ - pos_);
    std::memcpy(dst + done, buf_.data() + pos_, k);
    pos_ += k;
    done += k;
  }
  offset_ += done;
  return done;
}

std::size_t BufferedInput::append(std::string& out, std::size_t n) {
  std::size_t done = 0;
  while (done < n && (pos_ < end_ || fill())) {
    const std::size_t k = std::min(n - done, end_ - pos_);
    out.append(buf_.data() + pos_, k);
    pos_ += k;
    done += k;
  }
  offset_ += done;
  return done;
}

bool BufferedInput::read_line(std::string& line) {
  line.clear();
  if (pos_ == end_ && !fill()) return false;
  for (;;) {
    const char* begin = buf_.data() + pos_;
    const auto* nl = static_cast<const char*>(std::memchr(begin, '\n', end_ - pos_));
    const std::size_t k = nl ? static_cast<std::size_t>(nl - begin) : end_ - pos_;
    line.append(begin, k);
    pos_ += k;
    offset_ += k;
    if (nl) {
      ++pos_;
      ++offset_;
      return true;
    }
    if (!fill()) return true;  // a last line without '\n'
  }
}

}  // namespace kerascpp::detail
