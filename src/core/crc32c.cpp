#include "core/crc32c.hpp"

#include <isa-l/crc.h>

#include <algorithm>
#include <climits>

namespace kerascpp::detail {

std::uint32_t crc32c(const void* data, std::size_t n) {
  // ISA-L's crc32_iscsi is the bare reflected CRC: the caller starts from ~0 and inverts the
  // result (the standard CRC-32C's initial value and final xor). Its length is an int.
  auto* p = static_cast<unsigned char*>(const_cast<void*>(data));
  std::uint32_t crc = 0xFFFFFFFFu;
  while (n > 0) {
    const auto chunk = static_cast<int>(std::min<std::size_t>(n, INT_MAX));
    crc = crc32_iscsi(p, chunk, crc);
    p += chunk;
    n -= static_cast<std::size_t>(chunk);
  }
  return crc ^ 0xFFFFFFFFu;
}

std::uint32_t masked_crc32c(const void* data, std::size_t n) {
  const std::uint32_t crc = crc32c(data, n);
  return ((crc >> 15) | (crc << 17)) + 0xA282EAD8u;
}

}  // namespace kerascpp::detail
