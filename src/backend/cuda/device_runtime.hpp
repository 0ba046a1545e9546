// Device runtime of the CUDA backend: device enumeration, a caching device allocator, pinned
// host staging buffers and a guard for the calling thread's current device.
#pragma once
#include <cstddef>
#include <new>
#include <string>

namespace kerascpp::cuda {

// GPUs visible to the CUDA runtime; 0 with `reason` set when there are none or no driver.
int visible_device_count(std::string* reason = nullptr);

// Makes `device` current for the calling thread for the guard's lifetime.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);         // throws kerascpp::Error when the device cannot be selected
  DeviceGuard(int device, std::nothrow_t);  // for destructors: errors are ignored
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = 0;
};

// Caching device allocator, one pool per device. Blocks are rounded up to a size class
// (allocation_size_class) and kept on free lists when released, so a training step in steady
// state makes no cudaMalloc call. Reuse is safe because each device is driven by one replica
// stream and the legacy default stream (which orders itself with it): a block is handed out
// again only to work queued after the work that freed it.
void* device_allocate(int device, std::size_t nbytes);
void device_release(int device, void* ptr, std::size_t nbytes);
struct AllocatorStats {
  std::size_t cuda_malloc_calls = 0;  // blocks ever obtained from cudaMalloc
  std::size_t bytes_in_use = 0;
  std::size_t bytes_cached = 0;  // parked on free lists
};
AllocatorStats allocator_stats(int device);
// Gives every cached block of `device` back to the driver (after an out-of-memory, and for tests).
void release_cached_blocks(int device);

// The blocks one recording of device work (a CUDA graph, recorded_work.cpp) may touch, tracked by
// the device pool's BlockLedger (block_ledger.hpp): opened before the capture, closed after it,
// dropped (after the last replay has finished) when the recording goes away.
class RecordedBlocks {
 public:
  explicit RecordedBlocks(int device);  // opens: blocks obtained or given back from now on are kept
  ~RecordedBlocks();                    // drops: the kept blocks that were given back are free again
  RecordedBlocks(const RecordedBlocks&) = delete;
  RecordedBlocks& operator=(const RecordedBlocks&) = delete;
  bool opened() const { return opened_; }  // false: another recording was open on the device
  void close();                            // the capture ended
  bool stale() const;                      // a block the recording may use has been given back since

 private:
  int device_;
  void* recording_;  // the ledger's BlockLedger::Recording
  bool opened_ = false;
};

// Pinned (page-locked) host memory for staging batches: cached like device blocks.
void* pinned_allocate(std::size_t nbytes);
void pinned_release(void* ptr, std::size_t nbytes);

}  // namespace kerascpp::cuda
