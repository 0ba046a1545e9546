// CudaBackend::record: device work captured into a CUDA graph (stream capture) and replayed with
// one launch. Why: a small model's batch-1 predict is bound by the host's launches (ten or so
// kernels and library calls, ~0.14 ms on an H200 with each layer's GPU time equal to its host
// time, bench/results/gpu-2026-11-26d), which a graph launch replaces.
//
// The capture is thread-local: a call that would wait for the GPU or allocate from the driver
// fails it, and the recording is then refused (nullptr) with nothing run. Memory: the device
// pool's ledger (block_ledger.hpp) keeps every block the capture obtained or gave back out of the
// free lists while the recording lives, and marks the recording stale once a block from before
// its capture is freed, so a replay never touches memory handed to someone else.
#include <atomic>
#include <exception>

#include "backend/cuda/cuda_backend.hpp"
#include "backend/cuda/cuda_check.hpp"
#include "backend/cuda/device_runtime.hpp"
#include "backend/cuda/dnn_state.hpp"

namespace kerascpp::cuda {

namespace {

std::atomic<std::size_t> recordings{0};

class CudaRecordedWork final : public RecordedWork {
 public:
  CudaRecordedWork(int device, cudaStream_t stream) : device_(device), stream_(stream), blocks_(device) {}
  ~CudaRecordedWork() override {
    DeviceGuard guard(device_, std::nothrow);
    if (exec_) {
      cudaStreamSynchronize(stream_);  // the last replay may still run; the ledger frees its blocks next
      cudaGraphExecDestroy(exec_);
    }
    cudaGetLastError();
  }
  CudaRecordedWork(const CudaRecordedWork&) = delete;
  CudaRecordedWork& operator=(const CudaRecordedWork&) = delete;

  bool opened() const { return blocks_.opened(); }
  bool valid() const override { return exec_ && !blocks_.stale(); }
  void replay() override {
    DeviceGuard guard(device_);
    KCPP_CUDA_CHECK(cudaGraphLaunch(exec_, stream_));
  }

  // Ends the capture begun on the stream; true when it gave an executable graph.
  bool finish(bool body_ran) {
    cudaGraph_t graph = nullptr;
    const cudaError_t ended = cudaStreamEndCapture(stream_, &graph);
    blocks_.close();
    bool ok = body_ran && ended == cudaSuccess && graph;
    if (ok) ok = cudaGraphInstantiate(&exec_, graph, 0) == cudaSuccess;
    if (!ok) exec_ = nullptr;
    if (graph) cudaGraphDestroy(graph);
    cudaGetLastError();  // a refused capture's error is not sticky: leave none behind
    return ok;
  }

 private:
  int device_;
  cudaStream_t stream_;
  RecordedBlocks blocks_;
  cudaGraphExec_t exec_ = nullptr;
};

}  // namespace

std::size_t recordings_made() { return recordings.load(); }

std::unique_ptr<RecordedWork> CudaBackend::record(const std::function<void()>& body) {
  if (phases_ || !dnn_->record_graphs) return nullptr;  // KERASCPP_GPU_PHASES times each phase's events
  DeviceGuard guard(device_);
  auto work = std::make_unique<CudaRecordedWork>(device_, stream_);
  if (!work->opened()) return nullptr;  // another capture is open on this device
  if (cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal) != cudaSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  bool ran = true;
  try {
    body();
  } catch (const Error&) {
    ran = false;  // the capture refused a call (or the op failed): the caller runs it the usual way
  } catch (...) {
    work->finish(false);
    dnn_->forget_lazy_device_data();
    throw;
  }
  if (!work->finish(ran)) {
    // Lazily filled device constants the capture "filled" were never written: fill them anew.
    dnn_->forget_lazy_device_data();
    return nullptr;
  }
  ++recordings;
  return work;
}

}  // namespace kerascpp::cuda
