// write_idx: the inverse of read_idx, used by tests and data tools.
#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "check.hpp"
#include "data/idx_reader.hpp"

namespace kerascpp {
namespace {

unsigned char idx_code(DType dtype, const std::string& path) {
  switch (dtype) {
    case DType::uint8:
      return 0x08;
    case DType::int32:
      return 0x0C;
    case DType::float32:
      return 0x0D;
    default:
      throw ShapeError(
          fmt::format("write_idx: '{}': IDX has no {} type; convert the tensor to uint8, int32 or "
                      "float32 first",
                      path, dtype_name(dtype)));
  }
}

void store_be32(unsigned char* p, std::uint32_t v) {
  p[0] = static_cast<unsigned char>(v >> 24);
  p[1] = static_cast<unsigned char>(v >> 16);
  p[2] = static_cast<unsigned char>(v >> 8);
  p[3] = static_cast<unsigned char>(v);
}

}  // namespace

void write_idx(const std::string& path, const Tensor& t, bool gzip) {
  KERASCPP_CHECK_STATE(t.defined(), "write_idx: '{}': the tensor is undefined", path);
  KERASCPP_CHECK_SHAPE(t.rank() >= 1 && t.rank() <= 255,
                       "write_idx: '{}': IDX needs 1 to 255 dimensions, the tensor has shape {}", path,
                       shape_str(t.shape()));
  std::vector<unsigned char> bytes(4 + 4 * static_cast<std::size_t>(t.rank()) + t.nbytes());
  bytes[2] = idx_code(t.dtype(), path);
  bytes[3] = static_cast<unsigned char>(t.rank());
  for (int i = 0; i < t.rank(); ++i) {
    KERASCPP_CHECK_SHAPE(t.dim(i) <= 0xFFFFFFFFll,
                         "write_idx: '{}': dimension {} of shape {} exceeds IDX's uint32 limit", path, i,
                         shape_str(t.shape()));
    store_be32(&bytes[4 + 4 * static_cast<std::size_t>(i)], static_cast<std::uint32_t>(t.dim(i)));
  }
  unsigned char* data = bytes.data() + 4 + 4 * static_cast<std::size_t>(t.rank());
  if (t.nbytes()) std::memcpy(data, t.raw(), t.nbytes());
  if (dtype_size(t.dtype()) == 4)
    for (std::size_t i = 0; i < t.nbytes(); i += 4) {
      std::uint32_t v;
      std::memcpy(&v, data + i, 4);
      store_be32(data + i, v);
    }

  // Temporary file + rename: a crash never leaves a half-written file under the real name.
  const std::string tmp = path + ".tmp";
  gzFile f = gzopen(tmp.c_str(), gzip ? "wb" : "wbT");  // "T": plain, uncompressed output
  KERASCPP_CHECK_IO(f, "write_idx: cannot create '{}': {}", tmp, std::strerror(errno));
  std::size_t done = 0;
  bool ok = true;
  while (ok && done < bytes.size()) {
    auto chunk = static_cast<unsigned>(std::min<std::size_t>(bytes.size() - done, 1u << 30));
    int wrote = gzwrite(f, bytes.data() + done, chunk);
    ok = wrote > 0;
    done += ok ? static_cast<std::size_t>(wrote) : 0;
  }
  ok = (gzclose(f) == Z_OK) && ok;
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw IOError(fmt::format("write_idx: could not write '{}' (disk full or no permission?)", path));
  }
}

}  // namespace kerascpp
