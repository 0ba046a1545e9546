#include "data/idx_reader.hpp"
#include "check.hpp"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <limits>
#include <new>

namespace kerascpp {
namespace {

constexpr const char* kInstallHint =
    "for (Fashion-)MNIST install the Debian package dataset-fashion-mnist, or point KERASCPP_DATA "
    "(or --data_dir) at a directory holding the IDX files";

// gzread reads raw files transparently, so one path serves both kinds.
class GzReader {
 public:
  explicit GzReader(const std::string& path) : path_(path) {
    std::error_code ec;
    KERASCPP_CHECK_IO(std::filesystem::exists(path, ec), "read_idx: file '{}' does not exist; {}", path, kInstallHint);
    KERASCPP_CHECK_IO(!std::filesystem::is_directory(path, ec),
                      "read_idx: '{}' is a directory, not an IDX file; pass the file's path", path);
    file_ = gzopen(path.c_str(), "rb");
    KERASCPP_CHECK_IO(file_, "read_idx: cannot open '{}': {}; check the file's permissions", path,
                      std::strerror(errno));
    gzbuffer(file_, 1 << 17);
  }
  ~GzReader() { gzclose(file_); }
  bool is_raw() { return gzdirect(file_) != 0; }  // not gzip-compressed
  GzReader(const GzReader&) = delete;
  GzReader& operator=(const GzReader&) = delete;

  // Reads up to n bytes; returns how many were read (fewer only at the end of the data).
  std::size_t read(void* dst, std::size_t n) {
    std::size_t done = 0;
    while (done < n) {
      auto chunk = static_cast<unsigned>(std::min<std::size_t>(n - done, 1u << 30));
      int got = gzread(file_, static_cast<char*>(dst) + done, chunk);
      if (got < 0) {
        int code = 0;
        const char* msg = gzerror(file_, &code);
        throw IOError(fmt::format("read_idx: '{}' is corrupt ({}); re-download or reinstall it", path_, msg));
      }
      if (got == 0) break;
      done += static_cast<std::size_t>(got);
    }
    return done;
  }

 private:
  std::string path_;
  gzFile file_ = nullptr;
};

std::uint32_t load_be32(const unsigned char* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) | std::uint32_t{p[3]};
}

DType idx_dtype(unsigned char code, const std::string& path) {
  switch (code) {
    case 0x08:
      return DType::uint8;
    case 0x0C:
      return DType::int32;
    case 0x0D:
      return DType::float32;
    default:
      throw IOError(
          fmt::format("read_idx: '{}' holds IDX element type 0x{:02X}, which is not supported "
                      "(supported: 0x08 uint8, 0x0C int32, 0x0D float32); convert the file",
                      path, code));
  }
}

}  // namespace

Tensor read_idx(const std::string& path) {
  GzReader in(path);
  std::array<unsigned char, 4> magic{};
  std::size_t got = in.read(magic.data(), magic.size());
  KERASCPP_CHECK_IO(got >= magic.size(),
                    "read_idx: '{}' is truncated: {} bytes, too short for an IDX header; "
                    "re-download or reinstall it",
                    path, got);
  KERASCPP_CHECK_IO(magic[0] == 0 && magic[1] == 0 && magic[3] != 0,
                    "read_idx: '{}' is not an IDX file (magic bytes {:02X} {:02X} {:02X} {:02X}, "
                    "expected 00 00 08 0N); check that the path names an *-idx*-ubyte file",
                    path, magic[0], magic[1], magic[2], magic[3]);
  const DType dtype = idx_dtype(magic[2], path);
  const int ndims = magic[3];

  std::vector<unsigned char> dims_raw(static_cast<std::size_t>(ndims) * 4);
  got = in.read(dims_raw.data(), dims_raw.size());
  KERASCPP_CHECK_IO(got >= dims_raw.size(),
                    "read_idx: '{}' is truncated inside its header (expected {} dimension bytes, "
                    "found {}); re-download or reinstall it",
                    path, dims_raw.size(), got);
  Shape shape;
  std::uint64_t count = 1;
  for (int i = 0; i < ndims; ++i) {
    std::uint32_t d = load_be32(&dims_raw[static_cast<std::size_t>(i) * 4]);
    shape.push_back(d);
    // Guard the product: a corrupt header must give an error, not a wrapped size.
    KERASCPP_CHECK_IO(d == 0 || count <= (std::uint64_t{1} << 46) / d,
                      "read_idx: '{}' has an implausible header (dimensions {}...); the file is "
                      "corrupt, re-download or reinstall it",
                      path, shape_str(shape));
    count *= d;
  }

  const std::uint64_t data_bytes = count * dtype_size(dtype);
  const std::uint64_t header_bytes = 4 + dims_raw.size();
  std::error_code ec;
  const std::uint64_t file_bytes = std::filesystem::file_size(path, ec);
  // For a raw file the size is known: report truncation before allocating what the header claims.
  KERASCPP_CHECK_IO(!in.is_raw() || ec || file_bytes >= header_bytes + data_bytes,
                    "read_idx: '{}' is truncated: its header declares shape {} {} ({} data bytes) "
                    "but only {} bytes follow; re-download or reinstall it",
                    path, shape_str(shape), dtype_name(dtype), data_bytes, file_bytes - header_bytes);
  // A gzip file's data size is known only after decompressing it all; deflate packs at most about
  // 1032:1, so a header that declares more than that is corrupt (or a "zip bomb"): refuse it before
  // allocating what it claims, which could be gigabytes for a file of a few bytes.
  constexpr std::uint64_t kMaxDeflateRatio = 1100;
  KERASCPP_CHECK_IO(in.is_raw() || ec || data_bytes / kMaxDeflateRatio <= file_bytes,
                    "read_idx: '{}' is corrupt: its header declares shape {} {} ({} data bytes), more "
                    "than its {} compressed bytes can hold; re-download or reinstall it",
                    path, shape_str(shape), dtype_name(dtype), data_bytes, file_bytes);
  Tensor t;
  try {
    t = Tensor(shape, dtype);
  } catch (const std::bad_alloc&) {
    throw IOError(
        fmt::format("read_idx: '{}' declares shape {} {}, which does not fit in memory; is the "
                    "header corrupt?",
                    path, shape_str(shape), dtype_name(dtype)));
  }
  got = in.read(t.raw(), t.nbytes());
  KERASCPP_CHECK_IO(got >= t.nbytes(),
                    "read_idx: '{}' is truncated: its header declares shape {} {} ({} data bytes) "
                    "but only {} bytes follow; re-download or reinstall it",
                    path, shape_str(shape), dtype_name(dtype), t.nbytes(), got);
  if (dtype_size(dtype) == 4) {  // stored big-endian
    auto* p = static_cast<unsigned char*>(t.raw());
    for (std::size_t i = 0; i < t.nbytes(); i += 4) {
      std::uint32_t v = load_be32(p + i);
      std::memcpy(p + i, &v, 4);
    }
  }
  return t;
}

}  // namespace kerascpp
