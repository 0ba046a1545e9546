// Batches go to GPU replicas through pinned host memory on one copy stream per device.
//
// Who fills the pinned buffer. By default one upload thread does: it copies the next batch into
// pinned memory and queues the copy while the caller (the fit loop) launches the current step.
// KERASCPP_GPU_UPLOAD=caller does both on the caller's thread, just before it launches the step.
// The thread won on an H200: ResNet-50 b64 828.8 images/s against 766.1 (2026-11-26, README
// "GPUs"); a batch's memcpy (38.5 MB there) on the fit loop's thread delays the step's launches.
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <string_view>
#include <thread>

#include "backend/cuda/cuda_backend.hpp"
#include "backend/cuda/cuda_check.hpp"
#include "backend/cuda/device_runtime.hpp"
#include "backend/cuda/gpu_seam.hpp"
#include "check.hpp"
#include "core/knobs.hpp"

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
  KERASCPP_CHECK_DEVICE(b, "{}", "upload to a GPU: the replica's backend is " + backend.name() + ", not a GPU backend");
  return *b;
}

bool upload_thread_enabled() {
  static const bool enabled = [] {
    const char* env = ::kerascpp::detail::knob("KERASCPP_GPU_UPLOAD");
    return !(env && std::string_view(env) == "caller");
  }();
  return enabled;
}

// The upload thread: runs jobs in the order they were posted, for the life of the process.
class UploadThread {
 public:
  static UploadThread& instance() {
    static auto* t = new UploadThread;  // never destroyed: its thread may outlive static destructors
    return *t;
  }
  void post(std::function<void()> job) {
    {
      std::lock_guard lock(mu_);
      jobs_.push_back(std::move(job));
    }
    cv_.notify_one();
  }

 private:
  UploadThread() {
    std::thread([this] { run(); }).detach();
  }
  void run() {
    for (;;) {
      std::function<void()> job;
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return !jobs_.empty(); });
        job = std::move(jobs_.front());
        jobs_.pop_front();
      }
      job();
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
};

// Owns the pinned buffer and the completion event until the copy has certainly finished.
struct UploadState {
  int device = 0;
  void* pinned = nullptr;
  std::size_t nbytes = 0;
  cudaEvent_t done = nullptr;
  // On the upload thread: ready once the copy is queued (and `done` recorded after it).
  std::shared_future<void> queued;
  ~UploadState() {
    if (queued.valid()) queued.wait();
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
  KERASCPP_CHECK_DEVICE(host.on_host(), "{}",
                        "upload_async: the source is on " + host.device().str() + ", not the host");
  cuda::DeviceGuard guard(b.device_index());
  auto state = std::make_shared<UploadState>();
  state->device = b.device_index();
  state->nbytes = host.nbytes();
  PendingUpload up{Tensor(host.shape(), host.dtype(), b.device()), nullptr};
  KCPP_CUDA_CHECK(cudaEventCreateWithFlags(&state->done, cudaEventDisableTiming));
  if (state->nbytes) {
    state->pinned = cuda::pinned_allocate(state->nbytes);
    cudaStream_t copies = copy_stream(b.device_index());
    // The destination block may have been freed by work still queued on the compute stream: the
    // copy waits for what is queued there now (this event, recorded here, not on the thread).
    KCPP_CUDA_CHECK(cudaEventRecord(state->done, b.stream()));
    // A plain pointer to the state: it must die with the PendingUpload (whose destination tensor
    // is released after it), and its destructor waits for this job first.
    auto queue_copy = [st = state.get(), copies, dst = up.tensor.raw()](const Tensor& source) {
      std::memcpy(st->pinned, source.raw(), st->nbytes);
      KCPP_CUDA_CHECK(cudaStreamWaitEvent(copies, st->done, 0));
      KCPP_CUDA_CHECK(cudaMemcpyAsync(dst, st->pinned, st->nbytes, cudaMemcpyHostToDevice, copies));
      KCPP_CUDA_CHECK(cudaEventRecord(st->done, copies));
    };
    if (upload_thread_enabled()) {
      // The job holds `host` (its storage) until the copy is queued, and lets go of it before it
      // says so: nothing of the batch outlives the PendingUpload.
      auto queued = std::make_shared<std::promise<void>>();
      state->queued = queued->get_future().share();
      UploadThread::instance().post([queue_copy, queued, source = host, device = state->device]() mutable {
        try {
          cuda::DeviceGuard guard(device);
          queue_copy(source);
          source = Tensor();
          queued->set_value();
        } catch (...) {
          source = Tensor();
          queued->set_exception(std::current_exception());
        }
      });
    } else {
      queue_copy(host);
    }
  }
  up.done = std::move(state);
  return up;
}

void cuda_wait_upload(const PendingUpload& upload, Backend& backend) {
  auto* state = static_cast<UploadState*>(upload.done.get());
  if (!state || !state->nbytes) return;
  if (state->queued.valid()) state->queued.get();  // the copy is queued (rethrows its error)
  KCPP_CUDA_CHECK(cudaStreamWaitEvent(as_cuda(backend).stream(), state->done, 0));
}

}  // namespace kerascpp::detail
