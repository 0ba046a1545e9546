// Caching allocator for host memory: freed blocks are kept by size and handed out again,
// so a training step in steady state makes no calls to the system allocator.
#pragma once
#include <cstddef>

namespace kerascpp::detail {

void* host_allocate(std::size_t nbytes);
void host_release(void* ptr, std::size_t nbytes);
std::size_t host_cached_bytes();        // bytes parked in the cache (for tests and stats)
std::size_t host_system_allocations();  // blocks ever obtained from the system allocator

}  // namespace kerascpp::detail
