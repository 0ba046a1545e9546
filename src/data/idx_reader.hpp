// IDX files (the MNIST / Fashion-MNIST format): a big-endian header (magic 0x0000TTNN, then NN
// uint32 dimensions) followed by the data. Files may be gzip-compressed or raw.
#pragma once
#include <string>

#include "kerascpp/tensor/tensor.hpp"

namespace kerascpp {

// Reads a gzip-compressed or raw IDX file. Element types: 0x08 uint8, 0x0C int32, 0x0D float32.
// Throws IOError naming the path for a missing, truncated or malformed file.
Tensor read_idx(const std::string& path);

// Writes `t` (uint8, int32 or float32) as an IDX file, gzip-compressed if `gzip`. Writes to a
// temporary file and renames it into place. For tests and data tools.
void write_idx(const std::string& path, const Tensor& t, bool gzip);

}  // namespace kerascpp
