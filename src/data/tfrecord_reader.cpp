#include "data/tfrecord_reader.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/crc32c.hpp"
#include "kerascpp/error.hpp"

namespace kerascpp::detail {
namespace {

std::uint64_t load_le(const char* p, int bytes) {
  std::uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= std::uint64_t{static_cast<unsigned char>(p[i])} << (8 * i);
  return v;
}

// Data is read a chunk at a time, so a corrupt length whose CRC matches by chance cannot make
// the reader ask for more memory than the file holds.
constexpr std::size_t kChunk = std::size_t{1} << 20;

}  // namespace

TFRecordReader::TFRecordReader(std::string path, Compression compression, const char* op)
    : path_(std::move(path)), compression_(compression), op_(op), in_(open_byte_stream(path_, compression, op)) {}

void TFRecordReader::fail(std::uint64_t offset, const std::string& what) const {
  const std::string where =
      compression_ == Compression::none
          ? fmt::format("byte offset {}", offset)
          : fmt::format("byte offset {} of the {}-decompressed data", offset, compression_name(compression_));
  throw IOError(
      fmt::format("{}: file '{}': record {} (counting from 0) at {}: {}; the file is truncated or corrupt "
                  "(re-create it, or read only the records before this one)",
                  op_, path_, index_, where, what));
}

bool TFRecordReader::next(std::string& record) {
  const std::uint64_t at = in_.offset();
  char header[12];
  const std::size_t got = in_.read(header, sizeof header);
  if (got == 0) return false;
  if (got < sizeof header)
    fail(at, fmt::format("expected a 12-byte header (8-byte length, 4-byte length CRC) but the file ends {} "
                         "bytes into it",
                         got));
  const std::uint64_t length = load_le(header, 8);
  const auto stored = static_cast<std::uint32_t>(load_le(header + 8, 4));
  if (const std::uint32_t expected = masked_crc32c(header, 8); stored != expected) {
    // A gzip file read as plain bytes fails here first: say so.
    const bool looks_gzip = at == 0 && compression_ == Compression::none &&
                            static_cast<unsigned char>(header[0]) == 0x1f &&
                            static_cast<unsigned char>(header[1]) == 0x8b;
    fail(at, fmt::format("length CRC mismatch: expected masked CRC-32C 0x{:08x} of the length bytes, found 0x{:08x}{}",
                         expected, stored,
                         looks_gzip ? " (the file starts like a gzip stream: pass compression_type \"GZIP\")" : ""));
  }
  record.clear();
  while (record.size() < length) {
    const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(length - record.size(), kChunk));
    if (in_.append(record, want) < want)
      fail(at,
           fmt::format("the header declares {} data bytes but the file ends after {} of them", length, record.size()));
  }
  char footer[4];
  if (const std::size_t n = in_.read(footer, sizeof footer); n < sizeof footer)
    fail(at, fmt::format("expected a 4-byte data CRC after the {} data bytes but the file ends {} bytes into it",
                         length, n));
  const auto stored_data = static_cast<std::uint32_t>(load_le(footer, 4));
  if (const std::uint32_t expected = masked_crc32c(record.data(), record.size()); stored_data != expected)
    fail(at, fmt::format("data CRC mismatch: expected masked CRC-32C 0x{:08x} of the {} data bytes, found 0x{:08x}",
                         expected, length, stored_data));
  ++index_;
  return true;
}

}  // namespace kerascpp::detail
