#include "tensor/host_allocator.hpp"

#include <cstdlib>
#include <map>
#include <mutex>
#include <new>

namespace kerascpp::detail {
namespace {

constexpr std::size_t kAlignment = 64;  // cache line; what oneDNN prefers
constexpr std::size_t kMaxCached = std::size_t(2) << 30;
// Blocks above this go back to the system when freed, unless their size recurs: one-off buffers
// such as a dataset's raw bytes would otherwise stay resident. A size the system has been asked
// for twice (a large model's input batch, 38.5 MB for ResNet-50 at batch 64) is cached, since
// glibc serves such blocks with mmap: each one cost page faults where it was filled and an
// munmap where it died. On an H100 that munmap was 1.3 ms of the fit loop's thread between two
// GPU steps, the GPU idle; 0.05 ms with the cache (bench/results/gpu-2026-11-26c).
constexpr std::size_t kMaxCachedBlock = std::size_t(32) << 20;

struct Cache {
  std::mutex mu;
  std::multimap<std::size_t, void*> free_blocks;
  std::map<std::size_t, int> large_allocations;  // system allocations per size above kMaxCachedBlock
  std::size_t cached = 0;
  std::size_t system_allocations = 0;
  ~Cache() {
    for (auto& [size, ptr] : free_blocks) std::free(ptr);
  }
};

Cache& cache() {
  static Cache* c = new Cache();  // leaked on purpose: tensors may die during static destruction
  return *c;
}

std::size_t round_up(std::size_t n) { return (n + kAlignment - 1) / kAlignment * kAlignment; }

}  // namespace

void* host_allocate(std::size_t nbytes) {
  std::size_t size = round_up(nbytes == 0 ? 1 : nbytes);
  {
    Cache& c = cache();
    std::lock_guard lock(c.mu);
    auto it = c.free_blocks.find(size);
    if (it != c.free_blocks.end()) {
      void* p = it->second;
      c.free_blocks.erase(it);
      c.cached -= size;
      return p;
    }
  }
  void* p = std::aligned_alloc(kAlignment, size);
  if (!p) throw std::bad_alloc();
  Cache& c = cache();
  std::lock_guard lock(c.mu);
  ++c.system_allocations;
  if (size > kMaxCachedBlock) ++c.large_allocations[size];
  return p;
}

void host_release(void* ptr, std::size_t nbytes) {
  if (!ptr) return;
  std::size_t size = round_up(nbytes == 0 ? 1 : nbytes);
  Cache& c = cache();
  std::lock_guard lock(c.mu);
  const bool recurring = size <= kMaxCachedBlock || c.large_allocations[size] >= 2;
  if (!recurring || c.cached + size > kMaxCached) {
    std::free(ptr);
    return;
  }
  c.free_blocks.emplace(size, ptr);
  c.cached += size;
}

std::size_t host_cached_bytes() {
  Cache& c = cache();
  std::lock_guard lock(c.mu);
  return c.cached;
}

std::size_t host_system_allocations() {
  Cache& c = cache();
  std::lock_guard lock(c.mu);
  return c.system_allocations;
}

}  // namespace kerascpp::detail
