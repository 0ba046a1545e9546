// The GPU seam of a build without the CUDA backend (KERASCPP_CUDA=OFF or no toolkit found).
#include "backend/gpu_support.hpp"

namespace kerascpp::detail {

const GpuAvailability& gpu_availability() {
  static const GpuAvailability a{false, 0,
                                 "this build of kerascpp has no CUDA backend (configure with -DKERASCPP_CUDA=ON "
                                 "on a machine with the CUDA toolkit, cuDNN and NCCL)"};
  return a;
}

const DeviceMemoryOps* gpu_memory_ops() { return nullptr; }

std::unique_ptr<Backend> make_gpu_backend(int device) {
  throw DeviceError("gpu:" + std::to_string(device) + ": " + gpu_availability().reason);
}

std::unique_ptr<DeviceCollectives> make_gpu_collectives(const std::vector<Backend*>&, distribute::CrossDeviceOpsKind,
                                                        const NcclSpan*) {
  throw DeviceError("GPU collectives: " + gpu_availability().reason);
}

std::array<char, 128> make_nccl_unique_id() { throw DeviceError("NCCL: " + gpu_availability().reason); }

PendingUpload upload_async(const Tensor&, Backend& backend) {
  throw DeviceError(backend.device().str() + ": " + gpu_availability().reason);
}

void wait_upload(const PendingUpload&, Backend&) {}

std::shared_ptr<void> enter_gpu(int device) {
  throw DeviceError("gpu:" + std::to_string(device) + ": " + gpu_availability().reason);
}

}  // namespace kerascpp::detail
