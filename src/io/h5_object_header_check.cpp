#include "io/h5_object_header_check.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace kerascpp::io::h5 {
namespace {

std::uint64_t little_endian(const unsigned char* p, std::size_t n) {
  std::uint64_t v = 0;
  for (std::size_t i = n; i-- > 0;) v = v << 8 | p[i];
  return v;
}

// Bob Jenkins' lookup3 hash (hashlittle, initial value 0): the checksum of HDF5's version 2
// metadata (H5_checksum_metadata).
std::uint32_t lookup3(const unsigned char* k, std::size_t length) {
  const auto rot = [](std::uint32_t x, int r) { return (x << r) | (x >> (32 - r)); };
  const auto word = [&](std::size_t at, std::size_t n) {  // up to 4 bytes, little-endian
    std::uint32_t v = 0;
    for (std::size_t i = 0; i < n; ++i) v |= static_cast<std::uint32_t>(k[at + i]) << (8 * i);
    return v;
  };
  std::uint32_t a, b, c;
  a = b = c = 0xdeadbeefu + static_cast<std::uint32_t>(length);
  while (length > 12) {
    a += word(0, 4);
    b += word(4, 4);
    c += word(8, 4);
    a -= c, a ^= rot(c, 4), c += b;
    b -= a, b ^= rot(a, 6), a += c;
    c -= b, c ^= rot(b, 8), b += a;
    a -= c, a ^= rot(c, 16), c += b;
    b -= a, b ^= rot(a, 19), a += c;
    c -= b, c ^= rot(b, 4), b += a;
    length -= 12;
    k += 12;
  }
  if (length == 0) return c;
  a += word(0, std::min<std::size_t>(length, 4));
  if (length > 4) b += word(4, std::min<std::size_t>(length - 4, 4));
  if (length > 8) c += word(8, length - 8);
  c ^= b, c -= rot(b, 14);
  a ^= c, a -= rot(c, 11);
  b ^= a, b -= rot(a, 25);
  c ^= b, c -= rot(b, 16);
  a ^= c, a -= rot(c, 4);
  b ^= a, b -= rot(a, 14);
  c ^= b, c -= rot(b, 24);
  return c;
}

}  // namespace

FileGeometry read_superblock_geometry(std::uint64_t file_bytes, std::uint64_t userblock, std::size_t sizeof_addr,
                                      std::size_t sizeof_size, const ReadBytes& read) {
  FileGeometry geometry;
  geometry.file_bytes = file_bytes;
  geometry.base = userblock;
  geometry.sizeof_addr = sizeof_addr;
  geometry.sizeof_size = sizeof_size;
  geometry.end = file_bytes;
  // libhdf5 read the superblock already; its end-of-file and root group addresses lie at offsets
  // that depend on its version.
  if (geometry.base >= file_bytes) return geometry;
  const std::vector<unsigned char> sb =
      read(geometry.base, static_cast<std::size_t>(std::min<std::uint64_t>(128, file_bytes - geometry.base)));
  if (sb.size() < 12) return geometry;
  std::size_t eof_at = 0, root_at = 0;
  const std::size_t a = sizeof_addr;
  if (sb[8] <= 1) {
    const std::size_t addresses = sb[8] == 0 ? 24 : 28;  // base, free space, end of file, driver info
    eof_at = addresses + 2 * a;
    root_at = addresses + 4 * a + sizeof_size;  // in the root's symbol table entry, after its name offset
  } else {
    eof_at = 12 + 2 * a;  // base, superblock extension, end of file, root object header
    root_at = 12 + 3 * a;
  }
  if (root_at + a > sb.size()) return geometry;
  const std::uint64_t eof = little_endian(&sb[eof_at], a);
  if (eof < file_bytes - geometry.base) geometry.end = geometry.base + eof;
  geometry.root = little_endian(&sb[root_at], a);
  return geometry;
}

std::optional<std::string> object_header_problem(const FileGeometry& geometry, haddr_t addr, const ReadBytes& read) {
  const std::uint64_t base = geometry.base, end = geometry.end;
  const auto inside = [&](std::uint64_t at, std::uint64_t n) {
    return at <= end && base <= end - at && n <= end - at - base;
  };
  if (addr == HADDR_UNDEF || !inside(addr, 1)) return fmt::format("lies at {}, outside the file", addr);
  const std::vector<unsigned char> prefix =
      read(base + addr, static_cast<std::size_t>(std::min<std::uint64_t>(32, end - base - addr)));

  // Version 1: a 16-byte prefix, 8-byte message headers. Version 2: "OHDR", 4-byte message
  // headers (6 with attribute creation order), "OCHK" continuation chunks, each chunk ending in
  // its checksum.
  struct Chunk {
    std::uint64_t at, size;  // the chunk's whole image, prefix and checksum included
    std::size_t messages;    // where its messages start
  };
  int version = 0;
  bool creation_order = false;
  Chunk chunk0{};
  if (prefix.size() >= 16 && prefix[0] == 1) {
    version = 1;
    chunk0 = {addr, 16 + little_endian(&prefix[8], 4), 16};
  } else if (prefix.size() >= 7 && std::equal(prefix.begin(), prefix.begin() + 4, "OHDR") && prefix[4] == 2) {
    version = 2;
    const unsigned flags = prefix[5];
    creation_order = (flags & 0x04) != 0;
    const std::size_t at = 6 + ((flags & 0x20) ? 16 : 0) + ((flags & 0x10) ? 4 : 0);
    const std::size_t width = std::size_t{1} << (flags & 0x03);
    if (prefix.size() < at + width) return std::nullopt;
    chunk0 = {addr, at + width + little_endian(&prefix[at], width) + 4, at + width};
  } else {
    return std::nullopt;
  }
  if (chunk0.size < chunk0.messages || !inside(chunk0.at, chunk0.size))
    return fmt::format("declares {} bytes at {}, beyond the end of the {}-byte file", chunk0.size, chunk0.at,
                       geometry.file_bytes);

  // Walk the chunks, following continuation messages (type 0x10: address, length).
  std::vector<Chunk> chunks{chunk0};
  const std::size_t header_bytes = version == 1 ? 8 : (creation_order ? 6 : 4);
  for (std::size_t c = 0; c < chunks.size(); ++c) {
    if (c > 10000) return "chains more than 10000 chunks";
    const Chunk chunk = chunks[c];
    if (chunk.size > (1u << 24)) continue;  // no real header is this large: not read into memory
    const std::vector<unsigned char> image = read(base + chunk.at, static_cast<std::size_t>(chunk.size));
    std::size_t at = chunk.messages, chunk_end = image.size();
    if (version == 2) {
      if (chunk_end < chunk.messages + 4 || (c > 0 && !std::equal(image.begin(), image.begin() + 4, "OCHK")))
        return fmt::format("has no valid chunk at {}", chunk.at);
      chunk_end -= 4;
      if (lookup3(image.data(), chunk_end) != little_endian(&image[chunk_end], 4))
        return fmt::format("has a chunk at {} that fails its checksum", chunk.at);
    }
    while (at + header_bytes <= chunk_end) {
      const unsigned type = version == 1 ? static_cast<unsigned>(little_endian(&image[at], 2)) : image[at];
      const std::size_t size = static_cast<std::size_t>(little_endian(&image[at + (version == 1 ? 2 : 1)], 2));
      at += header_bytes;
      if (size > chunk_end - at) return fmt::format("has a message running past the end of its chunk at {}", chunk.at);
      if (type == 0x10 && size >= geometry.sizeof_addr + geometry.sizeof_size) {
        const std::uint64_t cont_at = little_endian(&image[at], geometry.sizeof_addr);
        const std::uint64_t cont_size = little_endian(&image[at + geometry.sizeof_addr], geometry.sizeof_size);
        if (!inside(cont_at, cont_size))
          return fmt::format("continues in {} bytes at {}, beyond the end of the {}-byte file", cont_size, cont_at,
                             geometry.file_bytes);
        chunks.push_back({cont_at, cont_size, version == 1 ? 0u : 4u});
      }
      at += size;
    }
  }
  return std::nullopt;
}

}  // namespace kerascpp::io::h5
