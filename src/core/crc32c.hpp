// Internal: CRC-32C (Castagnoli) through Intel's ISA-L, and the masked form TFRecord framing (TFRecord files,
// TensorBoard event files) stores beside each length and payload.
#pragma once
#include <cstddef>
#include <cstdint>

namespace kerascpp::detail {

// Plain CRC-32C of n bytes ("123456789" → 0xE3069283).
std::uint32_t crc32c(const void* data, std::size_t n);

// What a TFRecord stores: the CRC rotated right by 15 bits plus 0xA282EAD8 (mod 2^32). TensorFlow
// masks it because a CRC over bytes that themselves hold CRCs (records inside records) is weak.
std::uint32_t masked_crc32c(const void* data, std::size_t n);

}  // namespace kerascpp::detail
