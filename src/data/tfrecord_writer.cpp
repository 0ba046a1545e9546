// TFRecordWriter: records framed as TFRecordReader expects, optionally through one zlib
// deflate stream, into a hidden temporary file that close() renames onto the target.
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>

#include "check.hpp"
#include "core/crc32c.hpp"
#include "data/byte_stream.hpp"
#include "kerascpp/data/bytes.hpp"
#include "kerascpp/data/tfrecord.hpp"

namespace kerascpp::data {
namespace {

constexpr const char* kTfrecordWriterOp = "TFRecordWriter";

void append_le(std::string& out, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

// Hidden (leading dot), so a glob such as list_files("dir/*.tfrecord") never picks it up.
std::string temporary_name(const std::filesystem::path& target) {
  static std::atomic<unsigned> counter{0};
  const std::filesystem::path dir = target.has_parent_path() ? target.parent_path() : ".";
  return (dir / fmt::format(".{}.tmp.{}.{}", target.filename().string(), static_cast<long>(::getpid()), counter++))
      .string();
}

}  // namespace

struct TFRecordWriter::Impl {
  std::string path, tmp;
  detail::Compression compression = detail::Compression::none;
  std::FILE* file = nullptr;
  z_stream z{};
  std::string frame;  // one framed record, reused

  [[noreturn]] void fail(const std::string& what) {
    const std::string message = fmt::format("{}: writing '{}' failed: {}", kTfrecordWriterOp, path, what);
    discard();
    throw IOError(message);
  }
  void discard() {
    if (file) std::fclose(file);
    file = nullptr;
    if (compression != detail::Compression::none) deflateEnd(&z);
    compression = detail::Compression::none;
    std::remove(tmp.c_str());
  }
  void put(const char* p, std::size_t n) {
    if (n && std::fwrite(p, 1, n, file) != n) fail(std::strerror(errno));
  }
  // Runs deflate until its input is used up (or, for Z_FINISH, the stream is complete).
  void deflate_and_write(const char* p, std::size_t n, int flush) {
    char out[1 << 15];
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(p));
    z.avail_in = static_cast<uInt>(n);
    int rc = Z_OK;
    do {
      z.next_out = reinterpret_cast<Bytef*>(out);
      z.avail_out = sizeof out;
      rc = deflate(&z, flush);
      if (rc == Z_STREAM_ERROR) fail("zlib's deflate failed");
      put(out, sizeof out - z.avail_out);
    } while (z.avail_out == 0 || (flush == Z_FINISH && rc != Z_STREAM_END));
  }
  void sink(const char* p, std::size_t n) {
    if (compression == detail::Compression::none) return put(p, n);
    while (n > 0) {  // avail_in is 32 bits
      const std::size_t chunk = std::min<std::size_t>(n, 1u << 30);
      deflate_and_write(p, chunk, Z_NO_FLUSH);
      p += chunk;
      n -= chunk;
    }
  }
};

TFRecordWriter::TFRecordWriter(std::string path, TFRecordOptions options) : impl_(std::make_unique<Impl>()) {
  Impl& w = *impl_;
  w.path = std::move(path);
  const detail::Compression c = detail::parse_compression(options.compression_type, kTfrecordWriterOp);
  w.tmp = temporary_name(w.path);
  // O_EXCL: the temporary name is this writer's alone, even with several writers in one directory.
  const int fd = ::open(w.tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  KERASCPP_CHECK_IO(fd >= 0,
                    "{}: cannot create a file beside '{}': {}; check that the directory exists and is "
                    "writable",
                    kTfrecordWriterOp, w.path, std::strerror(errno));
  w.file = ::fdopen(fd, "wb");
  if (!w.file) {
    ::close(fd);
    std::remove(w.tmp.c_str());
    throw IOError(fmt::format("{}: cannot write '{}': {}", kTfrecordWriterOp, w.tmp, std::strerror(errno)));
  }
  if (c != detail::Compression::none) {
    if (deflateInit2(&w.z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, c == detail::Compression::gzip ? 15 + 16 : 15, 8,
                     Z_DEFAULT_STRATEGY) != Z_OK)
      w.fail("zlib could not start a compressed stream");
    w.compression = c;
  }
}

TFRecordWriter::~TFRecordWriter() {
  if (!impl_->file) return;
  if (std::uncaught_exceptions() > 0) {  // no half-written file under `path`
    impl_->discard();
    return;
  }
  try {
    close();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());  // a destructor must not throw; close() explicitly to catch it
  }
}

void TFRecordWriter::write(std::string_view record) {
  Impl& w = *impl_;
  KERASCPP_CHECK_STATE(w.file, "{}: '{}' is closed; open a new writer to write more", kTfrecordWriterOp, w.path);
  w.frame.clear();
  append_le(w.frame, record.size(), 8);
  append_le(w.frame, detail::masked_crc32c(w.frame.data(), 8), 4);
  w.sink(w.frame.data(), w.frame.size());
  w.sink(record.data(), record.size());
  w.frame.clear();
  append_le(w.frame, detail::masked_crc32c(record.data(), record.size()), 4);
  w.sink(w.frame.data(), w.frame.size());
}

void TFRecordWriter::write(const Tensor& record) { write(tensor_bytes(record)); }

void TFRecordWriter::flush() {
  Impl& w = *impl_;
  if (!w.file) return;
  if (w.compression != detail::Compression::none) w.deflate_and_write(nullptr, 0, Z_SYNC_FLUSH);
  if (std::fflush(w.file) != 0) w.fail(std::strerror(errno));
}

void TFRecordWriter::close() {
  Impl& w = *impl_;
  if (!w.file) return;
  if (w.compression != detail::Compression::none) {
    w.deflate_and_write(nullptr, 0, Z_FINISH);
    deflateEnd(&w.z);
    w.compression = detail::Compression::none;
  }
  // fsync before rename: otherwise a crash can leave `path` naming empty blocks.
  if (std::fflush(w.file) != 0 || ::fsync(::fileno(w.file)) != 0) w.fail(std::strerror(errno));
  const int rc = std::fclose(w.file);
  w.file = nullptr;
  if (rc != 0) w.fail(std::strerror(errno));
  std::error_code ec;
  std::filesystem::rename(w.tmp, w.path, ec);
  if (ec) w.fail(fmt::format("renaming '{}' onto it: {}", w.tmp, ec.message()));
}

}  // namespace kerascpp::data
