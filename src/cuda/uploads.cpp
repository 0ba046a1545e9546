// Batches go to GPU replicas through pinned host memory on one copy stream per device.
#include <cstring>
#include <map>
#include <mutex>

#include "cuda/cuda_backend.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/device_runtime.hpp"
#include "cuda/gpu_seam.hpp"

namespace kerascpp::detail {
namespace {

cudaStream_t copy_stream(int device) {
  static std::mutex mu;
  static auto* streams = new std::map<int, cudaStream_t>;  // live as long as the process
  std::lock_guard lock(mu);
  auto it = streams->find(device);
  if (it != streams->end()) return it->second;
  cuda::DeviceGuard guard(device);
  cudaStream_t s;
  KCPP_CUDA_CHECK(cudaStreamCreate(&s));
  return streams->emplace(device, s).first->second;
}

cuda::CudaBackend& as_cuda(Backend& backend) {
  auto* b = dynamic_cast<cuda::CudaBackend*>(&backend);
  if (!b) throw DeviceError("upload to a GPU: the replica's backend is " + backend.name() + ", not a GPU backend");
  return *b;
}

// Owns the pinned buffer and the completion event until the copy has certainly finished.
struct UploadState {
  int device = 0;
  void* pinned = nullptr;
  std::size_t nbytes = 0;
  cudaEvent_t done = nullptr;
  ~UploadState() {
    cuda::DeviceGuard guard(device, std::nothrow);
    if (done) {
      cudaEventSynchronize(done);
      cudaEventDestroy(done);
    }
    if (pinned) cuda::pinned_release(pinned, nbytes);
  }
};

}  // namespace

PendingUpload cuda_upload_async(const Tensor& host, Backend& backend) {
  cuda::CudaBackend& b = as_cuda(backend);
  if (!host.on_host()) throw DeviceError("upload_async: the source is on " + host.device().str() + ", not the host");
  cuda::DeviceGuard guard(b.device_index());
  auto state = std::make_shared<UploadState>();
  state->device = b.device_index();
  state->nbytes = host.nbytes();
  PendingUpload up{Tensor(host.shape(), host.dtype(), b.device()), nullptr};
  KCPP_CUDA_CHECK(cudaEventCreateWithFlags(&state->done, cudaEventDisableTiming));
  if (state->nbytes) {
    state->pinned = cuda::pinned_allocate(state->nbytes);
    std::memcpy(state->pinned, host.raw(), state->nbytes);
    cudaStream_t copies = copy_stream(b.device_index());
    // The destination block may have been freed by work still queued on the compute stream.
    KCPP_CUDA_CHECK(cudaEventRecord(state->done, b.stream()));
    KCPP_CUDA_CHECK(cudaStreamWaitEvent(copies, state->done, 0));
    KCPP_CUDA_CHECK(cudaMemcpyAsync(up.tensor.raw(), state->pinned, state->nbytes, cudaMemcpyHostToDevice, copies));
    KCPP_CUDA_CHECK(cudaEventRecord(state->done, copies));
  }
  up.done = std::move(state);
  return up;
}

void cuda_wait_upload(const PendingUpload& upload, Backend& backend) {
  auto* state = static_cast<UploadState*>(upload.done.get());
  if (!state || !state->nbytes) return;
  KCPP_CUDA_CHECK(cudaStreamWaitEvent(as_cuda(backend).stream(), state->done, 0));
}

}  // namespace kerascpp::detail
