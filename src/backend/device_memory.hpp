// The part of the GPU seam (backend/gpu_support.hpp) that Tensor needs: whether GPUs exist, and
// allocation, copies and zeroing of GPU storage. Kept apart so that Tensor depends on device
// memory only, not on GPU backends or collectives.
#pragma once
#include <cstddef>
#include <string>

#include "kerascpp/tensor/tensor.hpp"

namespace kerascpp::detail {

struct GpuAvailability {
  bool built = false;    // the library was compiled with the CUDA backend
  int device_count = 0;  // GPUs the CUDA runtime sees now
  std::string reason;    // why device_count is 0 ("no CUDA driver is loaded", ...); empty otherwise
};
// Probed once per process (the CUDA runtime's answer does not change while we run).
const GpuAvailability& gpu_availability();

// Memory operations on GPU storage, used by Tensor for allocation, zeroing and copies.
struct DeviceMemoryOps {
  void* (*allocate)(Device device, std::size_t nbytes);
  void (*release)(Device device, void* ptr, std::size_t nbytes);
  // Copies between any two devices (host or GPU) and returns when the bytes have arrived.
  void (*copy)(void* dst, Device dst_device, const void* src, Device src_device, std::size_t nbytes);
  void (*zero)(Device device, void* ptr, std::size_t nbytes);
};
// Null when the build has no CUDA backend.
const DeviceMemoryOps* gpu_memory_ops();

}  // namespace kerascpp::detail
