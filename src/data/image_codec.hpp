// Internal: what the JPEG and PNG decoders share: the encoded bytes of a tensor, the cap on the
// decoded size, and the IOError text naming the source.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "kerascpp/tensor/tensor.hpp"

namespace kerascpp::data::image_detail {

// A corrupt header can declare a 65535 x 65535 image in a few bytes; decoding refuses more than
// this many output bytes (1 GiB) before allocating them.
constexpr std::int64_t kMaxDecodedBytes = std::int64_t{1} << 30;

struct EncodedBytes {
  const unsigned char* data;
  std::size_t size;
};

// The bytes of a 1-D uint8 host tensor; ShapeError naming `op` for anything else.
EncodedBytes encoded_bytes(const Tensor& contents, const char* op);

// "op: <source or 'the bytes'>: " for messages.
std::string image_error_prefix(const char* op, const std::string& source);

// Throws IOError when height x width x channels exceeds kMaxDecodedBytes or a side is 0.
void check_decoded_size(std::int64_t height, std::int64_t width, std::int64_t channels, const char* op,
                        const std::string& source);

}  // namespace kerascpp::data::image_detail
