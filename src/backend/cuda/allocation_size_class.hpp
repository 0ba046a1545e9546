// Size classes of the caching device allocator, kept free of CUDA headers so the rounding
// rule is unit-tested on machines without a GPU.
#pragma once
#include <cstddef>

namespace kerascpp::cuda {

// Requests are rounded up to 512 bytes below 1 MiB, to 2 MiB multiples below 64 MiB and to
// 16 MiB multiples above: few classes, so freed blocks are found again for the next step's
// tensors of similar size; a block wastes less than one step of its class.
constexpr std::size_t allocation_size_class(std::size_t nbytes) {
  constexpr std::size_t kSmall = 512, kMid = 2u << 20, kLarge = 16u << 20;
  if (nbytes == 0) return kSmall;
  if (nbytes < (1u << 20)) return (nbytes + kSmall - 1) / kSmall * kSmall;
  if (nbytes < (64u << 20)) return (nbytes + kMid - 1) / kMid * kMid;
  return (nbytes + kLarge - 1) / kLarge * kLarge;
}

}  // namespace kerascpp::cuda
