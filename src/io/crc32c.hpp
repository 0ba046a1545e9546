// CRC-32C (Castagnoli) and the masked form that TFRecord framing stores next to each
// length and payload, so that TensorBoard's reader can reject torn or corrupt records.
#pragma once
#include <cstddef>
#include <cstdint>

namespace kerascpp::io {

// Plain CRC-32C of n bytes (reflected polynomial 0x82F63B78; "123456789" -> 0xE3069283).
std::uint32_t crc32c(const void* data, std::size_t n);

// TFRecord's mask: rotate right by 15 and add a constant. A CRC stored over data that itself
// holds CRCs would otherwise be weak; the mask is part of the on-disk format.
std::uint32_t mask_crc32c(std::uint32_t crc);

// mask_crc32c(crc32c(data, n)): what a record stores.
std::uint32_t masked_crc32c(const void* data, std::size_t n);

}  // namespace kerascpp::io
