// The one base class of cross-device ops inside the library. CrossReplica (kerascpp/distribute/context.hpp)
// is what a layer sees: all-reduce between the replicas of one strategy. DeviceCollectives adds
// what the strategy needs around a failing step (abort, reset). Its implementations live beside
// each other in this folder: CPU shared memory, MPI across workers, and NCCL with the GPU peer
// copies (nccl.cpp: CUDA code, so CMake builds it into libkerascpp_cuda.so and the engine
// reaches it through make_gpu_collectives).
#pragma once
#include <array>
#include <memory>
#include <vector>

#include "kerascpp/backend/backend.hpp"
#include "kerascpp/distribute/context.hpp"
#include "kerascpp/distribute/strategy.hpp"

namespace kerascpp::detail {

// Collectives between the replicas of one strategy that a failing replica can abort: between GPU
// replicas (NcclAllReduce, HierarchicalCopyAllReduce, ReductionToOneDevice; make_gpu_collectives)
// and between CPU replicas (distribute/collectives/shared_memory.hpp).
class DeviceCollectives : public CrossReplica {
 public:
  virtual void abort() = 0;  // releases replicas waiting in a collective: another replica failed
  virtual void reset() = 0;  // after an aborted step, before the next one
};
// `replicas[r]` is replica r's backend (a CUDA backend); throws kerascpp::Error without CUDA.
// NCCL communicators spanning the GPUs of every worker of a multi-worker job: this worker's
// replicas are ranks [first_rank, first_rank + replicas) of world_ranks, joined with the unique id
// rank 0 made (make_nccl_unique_id) and every worker received over MPI.
struct NcclSpan {
  int first_rank = 0;
  int world_ranks = 0;
  std::array<char, 128> unique_id{};  // NCCL_UNIQUE_ID_BYTES
};
// `span` null: the communicators span this process's replicas only.
std::unique_ptr<DeviceCollectives> make_gpu_collectives(const std::vector<Backend*>& replicas,
                                                        distribute::CrossDeviceOpsKind ops,
                                                        const NcclSpan* span = nullptr);
std::array<char, 128> make_nccl_unique_id();  // throws DeviceError without CUDA

}  // namespace kerascpp::detail
