// The CUDA side of the GPU seam (backend/gpu_support.hpp): libkerascpp_cuda.so's implementations,
// named apart from the detail:: entry points in libkerascpp that forward to them (the same name
// in both libraries would make the dynamic linker bind one to the other).
#pragma once
#include "backend/gpu_support.hpp"

namespace kerascpp::detail {

PendingUpload cuda_upload_async(const Tensor& host, Backend& backend);
void cuda_wait_upload(const PendingUpload& upload, Backend& backend);
std::unique_ptr<DeviceCollectives> cuda_make_gpu_collectives(const std::vector<Backend*>& replicas,
                                                             distribute::CrossDeviceOpsKind ops, const NcclSpan* span);
std::array<char, 128> cuda_nccl_unique_id();

}  // namespace kerascpp::detail

// The one symbol the loader looks up (kKerasCppCudaSeamSymbol).
extern "C" __attribute__((visibility("default"))) const kerascpp::detail::GpuSeam* kerascpp_cuda_seam_v1();
