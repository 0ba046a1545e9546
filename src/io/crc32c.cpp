#include "io/crc32c.hpp"

#include <array>

namespace kerascpp::io {
namespace {

// Byte-at-a-time table: event records are small and written a few times per epoch,
// so a simple, obviously-correct loop beats a hardware path we would have to test twice.
constexpr std::array<std::uint32_t, 256> make_table() {
  std::array<std::uint32_t, 256> table{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i;
    for (int bit = 0; bit < 8; ++bit) c = (c & 1U) ? (c >> 1) ^ 0x82F63B78U : c >> 1;
    table[i] = c;
  }
  return table;
}

constexpr std::array<std::uint32_t, 256> kTable = make_table();

}  // namespace

std::uint32_t crc32c(const void* data, std::size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
  std::uint32_t c = 0xFFFFFFFFU;
  for (std::size_t i = 0; i < n; ++i) c = kTable[(c ^ p[i]) & 0xFFU] ^ (c >> 8);
  return c ^ 0xFFFFFFFFU;
}

std::uint32_t mask_crc32c(std::uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xA282EAD8U; }

std::uint32_t masked_crc32c(const void* data, std::size_t n) { return mask_crc32c(crc32c(data, n)); }

}  // namespace kerascpp::io
