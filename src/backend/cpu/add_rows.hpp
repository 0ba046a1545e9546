// Per-channel double sums over the rows of an [rows, C] float32 block: the loop behind the
// backend's fixed-order reductions (row_sums, a convolution's bias gradient) and the bias
// gradient max pooling's backward takes at the pooled resolution.
#pragma once
#include <cstdint>

namespace kerascpp::cpu {

// acc[c] += x[r][c] over rows [r0, r1), each channel in row order (so every build gives the same
// bits).
void add_rows(const float* x, std::int64_t r0, std::int64_t r1, std::int64_t C, double* acc);

}  // namespace kerascpp::cpu
