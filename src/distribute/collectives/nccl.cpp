// Collectives between GPU replicas of one process, or (NcclAllReduce with an NcclSpan) of every
// worker of a multi-worker job.
// - NcclAllReduce: one NCCL communicator clique per strategy (ncclCommInitAll; across workers
//   ncclCommInitRank with the unique id rank 0 broadcast over MPI), each replica's
//   thread drives its own rank. Gradient buckets are reduced on a separate communication stream
//   per replica, ordered after the bucket's backward by an event, so backward continues on the
//   compute stream while NCCL reduces; wait_all_reduces makes the compute stream wait for them.
// - ReductionToOneDevice: gpu:0 gathers every replica's tensors (peer copies), sums them with its
//   backend and copies the sum back to every replica.
// - HierarchicalCopyAllReduce: as above, but pairs (0,1), (2,3), ... are summed first on the
//   even member of each pair (links within a pair are the short ones on machines without an
//   all-to-all NVLink), then the pair sums on gpu:0, then the result is broadcast.
// The copy-based reductions are issued by replica 0's thread while the others wait at a barrier;
// all of them are asynchronous on the GPU (events order the streams), none synchronises the host.
#include <fmt/format.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <optional>

#include "backend/cuda/cuda_backend.hpp"
#include "backend/cuda/cuda_check.hpp"
#include "backend/cuda/device_runtime.hpp"
#include "backend/cuda/gpu_seam.hpp"
#include "check.hpp"
#include "distribute/abortable_barrier.hpp"

namespace kerascpp::cuda {
namespace {

using distribute::CrossDeviceOpsKind;

void check_tensors(const std::vector<Tensor>& tensors, const CudaBackend& backend, const char* op) {
  for (const Tensor& t : tensors) {
    KERASCPP_CHECK_DEVICE(t.defined() && t.dtype() == DType::float32 && t.device() == backend.device(),
                          "{}: every tensor must be a float32 tensor on {} (got {} on {})", op, backend.device().str(),
                          t.defined() ? dtype_name(t.dtype()) : "undefined", t.defined() ? t.device().str() : "-");
  }
}

class GpuCollectives final : public detail::DeviceCollectives {
 public:
  GpuCollectives(std::vector<CudaBackend*> replicas, CrossDeviceOpsKind ops, std::optional<detail::NcclSpan> span)
      : replicas_(std::move(replicas)),
        ops_(ops),
        span_(std::move(span)),
        barrier_(static_cast<int>(replicas_.size())) {
    std::size_t n = replicas_.size();
    published_.assign(n, nullptr);
    pending_.assign(n, 0);
    ready_.resize(n);
    reduced_.resize(n);
    comm_streams_.resize(n);
    for (std::size_t r = 0; r < n; ++r) {
      DeviceGuard guard(replicas_[r]->device_index());
      KCPP_CUDA_CHECK(cudaEventCreateWithFlags(&ready_[r], cudaEventDisableTiming));
      KCPP_CUDA_CHECK(cudaEventCreateWithFlags(&reduced_[r], cudaEventDisableTiming));
      KCPP_CUDA_CHECK(cudaStreamCreate(&comm_streams_[r]));
      enable_peer_access(r);
    }
    {
      DeviceGuard guard(replicas_[0]->device_index());
      KCPP_CUDA_CHECK(cudaEventCreateWithFlags(&broadcast_done_, cudaEventDisableTiming));
    }
    if (ops_ == CrossDeviceOpsKind::nccl) init_communicators();
  }

  ~GpuCollectives() override {
    for (std::size_t r = 0; r < replicas_.size(); ++r) {
      DeviceGuard guard(replicas_[r]->device_index(), std::nothrow);
      cudaStreamSynchronize(comm_streams_[r]);
      cudaStreamDestroy(comm_streams_[r]);
      cudaEventDestroy(ready_[r]);
      cudaEventDestroy(reduced_[r]);
    }
    cudaEventDestroy(broadcast_done_);
    destroy_communicators(aborted_);
  }

  int num_replicas() const override { return span_ ? span_->world_ranks : static_cast<int>(replicas_.size()); }

  void all_reduce_sum(int replica, std::vector<Tensor>& tensors) override {
    CudaBackend& b = *replicas_[static_cast<std::size_t>(replica)];
    check_tensors(tensors, b, "all_reduce_sum");
    if (ops_ == CrossDeviceOpsKind::nccl) nccl_sum(replica, tensors, b.stream());  // in order on the compute stream
    else copy_tree_sum(replica, tensors);
  }

  void begin_all_reduce_sum(int replica, int bucket, std::vector<Tensor>& tensors) override {
    if (ops_ != CrossDeviceOpsKind::nccl) return all_reduce_sum(replica, tensors);
    auto r = static_cast<std::size_t>(replica);
    CudaBackend& b = *replicas_[r];
    check_tensors(tensors, b, "all_reduce_sum");
    // The bucket's gradients are final once the compute stream reaches this point.
    KCPP_CUDA_CHECK(cudaEventRecord(ready_[r], b.stream()));
    KCPP_CUDA_CHECK(cudaStreamWaitEvent(comm_streams_[r], ready_[r], 0));
    nccl_sum(replica, tensors, comm_streams_[r]);
    pending_[r] = 1;
  }

  void wait_all_reduces(int replica) override {
    auto r = static_cast<std::size_t>(replica);
    if (!pending_[r]) return;
    KCPP_CUDA_CHECK(cudaEventRecord(reduced_[r], comm_streams_[r]));
    KCPP_CUDA_CHECK(cudaStreamWaitEvent(replicas_[r]->stream(), reduced_[r], 0));
    pending_[r] = 0;
  }

  // Called by the failing replica's thread: releases the replicas waiting at the barrier. The
  // communicators are left alone here (another thread may be inside an NCCL call on its own rank).
  void abort() override {
    aborted_ = true;
    barrier_.abort();
  }

  // Called on the strategy's thread once every replica has returned. A rank that never made its
  // call leaves the others' NCCL kernels waiting forever on the GPU; aborting the communicators
  // ends those kernels, and fresh ones serve the next step.
  void reset() override {
    barrier_.reset();
    std::fill(pending_.begin(), pending_.end(), 0);
    if (aborted_.exchange(false) && ops_ == CrossDeviceOpsKind::nccl) {
      destroy_communicators(true);
      // Across workers the peers are mid-step too: the job cannot go on (the MPI side poisons
      // the world); with no communicators left, the next NCCL call says so.
      if (!span_) init_communicators();
    }
  }

 private:
  void enable_peer_access(std::size_t r) {
    for (std::size_t q = 0; q < replicas_.size(); ++q) {
      if (q == r) continue;
      int can = 0;
      cudaDeviceCanAccessPeer(&can, replicas_[r]->device_index(), replicas_[q]->device_index());
      if (can) {
        cudaError_t e = cudaDeviceEnablePeerAccess(replicas_[q]->device_index(), 0);
        if (e != cudaSuccess && e != cudaErrorPeerAccessAlreadyEnabled) KCPP_CUDA_CHECK(e);
        cudaGetLastError();  // "already enabled" is not an error for us
      }
    }
  }

  void init_communicators() {
    std::vector<int> devices;
    for (auto* b : replicas_) devices.push_back(b->device_index());
    std::lock_guard lock(comms_mu_);
    comms_.assign(replicas_.size(), nullptr);
    if (!span_) {
      KCPP_NCCL_CHECK(ncclCommInitAll(comms_.data(), static_cast<int>(comms_.size()), devices.data()));
      return;
    }
    // One rank per local GPU, all initialised in one group (NCCL requires it when one thread
    // drives several ranks); the call returns once every worker's ranks have joined.
    ncclUniqueId id;
    static_assert(sizeof(id.internal) == sizeof(span_->unique_id));
    std::memcpy(id.internal, span_->unique_id.data(), sizeof(id.internal));
    KCPP_NCCL_CHECK(ncclGroupStart());
    for (std::size_t r = 0; r < replicas_.size(); ++r) {
      DeviceGuard guard(devices[r]);
      ncclResult_t res = ncclCommInitRank(&comms_[r], span_->world_ranks, id, span_->first_rank + static_cast<int>(r));
      if (res != ncclSuccess) {
        ncclGroupEnd();
        KCPP_NCCL_CHECK(res);
      }
    }
    KCPP_NCCL_CHECK(ncclGroupEnd());
  }

  void destroy_communicators(bool abort) {
    std::lock_guard lock(comms_mu_);
    for (ncclComm_t c : comms_)
      if (c) abort ? ncclCommAbort(c) : ncclCommDestroy(c);
    comms_.clear();
  }

  void nccl_sum(int replica, std::vector<Tensor>& tensors, cudaStream_t stream) {
    if (aborted_) throw detail::ReplicaAborted();
    ncclComm_t comm;
    {
      std::lock_guard lock(comms_mu_);  // only reset() and the destructor replace the communicators
      KERASCPP_CHECK_STATE(!comms_.empty(),
                           "NCCL: the communicators spanning the workers were aborted after a failed step; the "
                           "multi-worker job cannot go on (rerun it to resume from the last backup)");
      comm = comms_.at(static_cast<std::size_t>(replica));
    }
    // One group per call: NCCL fuses the bucket's tensors into as few kernels as it can.
    KCPP_NCCL_CHECK(ncclGroupStart());
    for (Tensor& t : tensors) {
      float* p = t.data<float>();
      ncclResult_t res = ncclAllReduce(p, p, static_cast<std::size_t>(t.numel()), ncclFloat, ncclSum, comm, stream);
      if (res != ncclSuccess) {
        ncclGroupEnd();
        KCPP_NCCL_CHECK(res);
      }
    }
    KCPP_NCCL_CHECK(ncclGroupEnd());
  }

  // dst's tensors += src's tensors, on dst's stream, after both are ready.
  void add_into(std::size_t dst, std::size_t src) {
    CudaBackend& d = *replicas_[dst];
    DeviceGuard guard(d.device_index());
    KCPP_CUDA_CHECK(cudaStreamWaitEvent(d.stream(), ready_[src], 0));
    auto& to = *published_[dst];
    const auto& from = *published_[src];
    for (std::size_t t = 0; t < to.size(); ++t) {
      Tensor incoming(to[t].shape(), DType::float32, d.device());  // from the caching allocator
      KCPP_CUDA_CHECK(cudaMemcpyPeerAsync(incoming.raw(), d.device_index(), from[t].raw(),
                                          replicas_[src]->device_index(), to[t].nbytes(), d.stream()));
      d.add_inplace(to[t], incoming);
    }
    KCPP_CUDA_CHECK(cudaEventRecord(ready_[dst], d.stream()));
  }

  void copy_tree_sum(int replica, std::vector<Tensor>& tensors) {
    auto r = static_cast<std::size_t>(replica);
    std::size_t n = replicas_.size();
    published_[r] = &tensors;
    KCPP_CUDA_CHECK(cudaEventRecord(ready_[r], replicas_[r]->stream()));
    barrier_.arrive_and_wait();
    if (r == 0) {
      for (std::size_t q = 1; q < n; ++q)
        KERASCPP_CHECK_SHAPE(published_[q]->size() == tensors.size(),
                             "all-reduce: replica 0 and replica {} passed different tensor lists ({} vs {}); "
                             "every replica must reduce the same variables in the same order",
                             q, tensors.size(), published_[q]->size());
      if (ops_ == CrossDeviceOpsKind::hierarchical_copy) {
        for (std::size_t q = 0; q + 1 < n; q += 2) add_into(q, q + 1);  // within pairs
        for (std::size_t q = 2; q < n; q += 2) add_into(0, q);          // pair sums on gpu:0
      } else {
        for (std::size_t q = 1; q < n; ++q) add_into(0, q);
      }
      CudaBackend& root = *replicas_[0];
      DeviceGuard guard(root.device_index());
      for (std::size_t q = 1; q < n; ++q)
        for (std::size_t t = 0; t < tensors.size(); ++t)
          KCPP_CUDA_CHECK(cudaMemcpyPeerAsync((*published_[q])[t].raw(), replicas_[q]->device_index(), tensors[t].raw(),
                                              root.device_index(), tensors[t].nbytes(), root.stream()));
      KCPP_CUDA_CHECK(cudaEventRecord(broadcast_done_, root.stream()));
    }
    barrier_.arrive_and_wait();
    if (r != 0) KCPP_CUDA_CHECK(cudaStreamWaitEvent(replicas_[r]->stream(), broadcast_done_, 0));
    // Nobody may publish the next call's tensors before every replica has queued its wait.
    barrier_.arrive_and_wait();
  }

  std::vector<CudaBackend*> replicas_;
  CrossDeviceOpsKind ops_;
  std::optional<detail::NcclSpan> span_;  // set: the communicators span every worker's GPUs
  detail::AbortableBarrier barrier_;
  std::vector<std::vector<Tensor>*> published_;  // written: the sum is copied into every list
  std::vector<char> pending_;                    // a bucket was handed to NCCL since the last wait (per replica; not
                                                 // vector<bool>: replicas write their own entries concurrently)
  std::atomic<bool> aborted_{false};
  std::vector<cudaEvent_t> ready_, reduced_;
  cudaEvent_t broadcast_done_ = nullptr;
  std::vector<cudaStream_t> comm_streams_;
  std::mutex comms_mu_;
  std::vector<ncclComm_t> comms_;
};

}  // namespace
}  // namespace kerascpp::cuda

namespace kerascpp::detail {

std::unique_ptr<DeviceCollectives> cuda_make_gpu_collectives(const std::vector<Backend*>& replicas,
                                                             distribute::CrossDeviceOpsKind ops, const NcclSpan* span) {
  KERASCPP_CHECK_VALUE(!span || ops == distribute::CrossDeviceOpsKind::nccl,
                       "GPU replicas across workers need NcclAllReduce, got {}",
                       distribute::cross_device_ops_name(ops));
  std::vector<cuda::CudaBackend*> gpus;
  for (Backend* b : replicas) {
    auto* g = dynamic_cast<cuda::CudaBackend*>(b);
    KERASCPP_CHECK_DEVICE(g, "{}", "GPU collectives need every replica on a GPU; got " + b->device().str());
    gpus.push_back(g);
  }
  return std::make_unique<cuda::GpuCollectives>(std::move(gpus), ops,
                                                span ? std::optional<NcclSpan>(*span) : std::nullopt);
}

std::array<char, 128> cuda_nccl_unique_id() {
  ncclUniqueId id;
  KCPP_NCCL_CHECK(ncclGetUniqueId(&id));
  std::array<char, 128> out{};
  static_assert(sizeof(id.internal) == out.size());
  std::memcpy(out.data(), id.internal, out.size());
  return out;
}

}  // namespace kerascpp::detail
