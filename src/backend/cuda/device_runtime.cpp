#include "backend/cuda/device_runtime.hpp"

#include <fmt/format.h>

#include <map>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "backend/cuda/allocation_size_class.hpp"
#include "backend/cuda/block_ledger.hpp"
#include "backend/cuda/cuda_check.hpp"
#include "kerascpp/error.hpp"

namespace kerascpp::cuda {

int visible_device_count(std::string* reason) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    // No driver, no device, or a driver older than the runtime: all mean "no GPU" to the caller.
    if (reason) *reason = fmt::format("the CUDA runtime reports \"{}\"", cudaGetErrorString(e));
    cudaGetLastError();  // clear the sticky-free error so later calls do not see it
    return 0;
  }
  if (n == 0 && reason) *reason = "the CUDA runtime sees no GPU";
  return n;
}

DeviceGuard::DeviceGuard(int device) {
  KCPP_CUDA_CHECK(cudaGetDevice(&previous_));
  if (previous_ != device) KCPP_CUDA_CHECK(cudaSetDevice(device));
}

DeviceGuard::DeviceGuard(int device, std::nothrow_t) {
  if (cudaGetDevice(&previous_) != cudaSuccess) previous_ = device;
  if (previous_ != device) cudaSetDevice(device);
  cudaGetLastError();
}

DeviceGuard::~DeviceGuard() { cudaSetDevice(previous_); }

namespace {

// Free lists by size class; one pool per device, plus one for pinned host memory (device -1).
struct Pool {
  std::multimap<std::size_t, void*> free_blocks;
  AllocatorStats stats;
  BlockLedger ledger;  // device pools only: what recorded device work keeps
};

std::mutex pools_mu;
std::unordered_map<int, Pool>& pools() {
  static auto* p = new std::unordered_map<int, Pool>;  // never destroyed: tensors may outlive statics
  return *p;
}

constexpr int kPinnedPool = -1;

void* obtain(int pool_id, std::size_t nbytes) {
  std::size_t size = allocation_size_class(nbytes);
  {
    std::lock_guard<std::mutex> lock(pools_mu);
    Pool& pool = pools()[pool_id];
    auto it = pool.free_blocks.find(size);
    if (it != pool.free_blocks.end()) {
      void* p = it->second;
      pool.free_blocks.erase(it);
      pool.stats.bytes_cached -= size;
      pool.stats.bytes_in_use += size;
      if (pool_id != kPinnedPool) pool.ledger.obtained(p, size);
      return p;
    }
  }
  bool recording = false;  // a recording of device work is being captured on this device
  if (pool_id != kPinnedPool) {
    std::lock_guard<std::mutex> lock(pools_mu);
    recording = pools()[pool_id].ledger.is_open();
  }
  void* p = nullptr;
  auto fresh = [&]() -> cudaError_t {
    if (pool_id == kPinnedPool) return cudaHostAlloc(&p, size, cudaHostAllocPortable);
    DeviceGuard guard(pool_id);
    if (!recording) return cudaMalloc(&p, size);
    // A thread-local capture refuses cudaMalloc; the block is the recording's (its ledger keeps
    // it from cudaFree while the recording lives), so the capture may allow it, as PyTorch's
    // graph pools do.
    cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    cudaThreadExchangeStreamCaptureMode(&mode);
    const cudaError_t e = cudaMalloc(&p, size);
    cudaThreadExchangeStreamCaptureMode(&mode);
    return e;
  };
  cudaError_t e = fresh();
  // Out of memory: free the cached blocks and retry (not during a capture, which cannot wait).
  if (e == cudaErrorMemoryAllocation && pool_id != kPinnedPool && !recording) {
    cudaGetLastError();
    release_cached_blocks(pool_id);  // the cache may hold enough memory in other size classes
    e = fresh();
  }
  if (e != cudaSuccess) {
    cudaGetLastError();
    throw DeviceError(
        fmt::format("cannot allocate {} bytes on {}: {}; use a smaller batch size", size,
                    pool_id == kPinnedPool ? std::string("pinned host memory") : fmt::format("gpu:{}", pool_id),
                    cudaGetErrorString(e)));
  }
  std::lock_guard<std::mutex> lock(pools_mu);
  Pool& pool = pools()[pool_id];
  pool.stats.cuda_malloc_calls++;
  pool.stats.bytes_in_use += size;
  if (pool_id != kPinnedPool) pool.ledger.obtained(p, size);
  return p;
}

void give_back(int pool_id, void* ptr, std::size_t nbytes) {
  if (!ptr) return;
  std::size_t size = allocation_size_class(nbytes);
  std::lock_guard<std::mutex> lock(pools_mu);
  Pool& pool = pools()[pool_id];
  if (pool_id != kPinnedPool && !pool.ledger.released(ptr)) return;  // a recording keeps it
  pool.free_blocks.emplace(size, ptr);
  pool.stats.bytes_in_use -= size;
  pool.stats.bytes_cached += size;
}

}  // namespace

void* device_allocate(int device, std::size_t nbytes) { return obtain(device, nbytes); }
void device_release(int device, void* ptr, std::size_t nbytes) { give_back(device, ptr, nbytes); }

AllocatorStats allocator_stats(int device) {
  std::lock_guard<std::mutex> lock(pools_mu);
  return pools()[device].stats;
}

void release_cached_blocks(int device) {
  std::vector<void*> blocks;
  {
    std::lock_guard<std::mutex> lock(pools_mu);
    Pool& pool = pools()[device];
    for (auto& [size, p] : pool.free_blocks) blocks.push_back(p);
    pool.free_blocks.clear();
    pool.stats.bytes_cached = 0;
  }
  DeviceGuard guard(device, std::nothrow);
  cudaDeviceSynchronize();  // a cached block may still be read by queued work
  for (void* p : blocks) cudaFree(p);
}

RecordedBlocks::RecordedBlocks(int device) : device_(device), recording_(new BlockLedger::Recording) {
  std::lock_guard<std::mutex> lock(pools_mu);
  opened_ = pools()[device_].ledger.open(static_cast<BlockLedger::Recording*>(recording_));
}

RecordedBlocks::~RecordedBlocks() {
  auto* r = static_cast<BlockLedger::Recording*>(recording_);
  if (opened_) {
    std::lock_guard<std::mutex> lock(pools_mu);
    Pool& pool = pools()[device_];
    for (const auto& [p, size] : pool.ledger.drop(r)) {
      pool.free_blocks.emplace(size, p);
      pool.stats.bytes_in_use -= size;
      pool.stats.bytes_cached += size;
    }
  }
  delete r;
}

void RecordedBlocks::close() {
  if (!opened_) return;
  std::lock_guard<std::mutex> lock(pools_mu);
  pools()[device_].ledger.close();
}

bool RecordedBlocks::stale() const {
  std::lock_guard<std::mutex> lock(pools_mu);
  return static_cast<const BlockLedger::Recording*>(recording_)->stale;
}

void* pinned_allocate(std::size_t nbytes) { return obtain(kPinnedPool, nbytes); }
void pinned_release(void* ptr, std::size_t nbytes) { give_back(kPinnedPool, ptr, nbytes); }

}  // namespace kerascpp::cuda
