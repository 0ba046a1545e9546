// Distribution strategies. A Strategy owns the replicas (one per device, each with its own
// thread, Backend and thread budget), runs a step on all of them and all-reduces between them.
// fit/evaluate/predict are written once on top of this interface and never ask how many
// replicas exist.
#pragma once
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kerascpp/distribute/context.hpp"

/// Distribution strategies (TensorFlow's tf.distribute): replicas on several devices or processes.
namespace kerascpp::distribute {

/// How gradients cross devices (the template argument of MirroredStrategy).
enum class CrossDeviceOpsKind { automatic, shared_memory, reduction_to_one_device, hierarchical_copy, nccl };
/// The default: SharedMemoryAllReduce between CPU replicas, NcclAllReduce between GPUs.
struct Auto {
  static constexpr CrossDeviceOpsKind kind = CrossDeviceOpsKind::automatic;  ///< the kind it names
};
/// CPU replicas sum in shared host memory.
struct SharedMemoryAllReduce {
  static constexpr CrossDeviceOpsKind kind = CrossDeviceOpsKind::shared_memory;  ///< the kind it names
};
/// TensorFlow's ReductionToOneDevice: gathered and summed on the first device, then copied back.
struct ReductionToOneDevice {
  static constexpr CrossDeviceOpsKind kind = CrossDeviceOpsKind::reduction_to_one_device;  ///< the kind it names
};
/// TensorFlow's HierarchicalCopyAllReduce (GPUs): pairs summed first, then the pair sums on gpu:0.
struct HierarchicalCopyAllReduce {
  static constexpr CrossDeviceOpsKind kind = CrossDeviceOpsKind::hierarchical_copy;  ///< the kind it names
};
/// NCCL's all-reduce between GPUs.
struct NcclAllReduce {
  static constexpr CrossDeviceOpsKind kind = CrossDeviceOpsKind::nccl;  ///< the kind it names
};
/// The class name for messages: "SharedMemoryAllReduce", "NcclAllReduce", ...
const char* cross_device_ops_name(CrossDeviceOpsKind kind);

/// How Strategy::reduce combines per-replica values: tf.distribute.ReduceOp.SUM / MEAN.
enum class ReduceOp { sum, mean };

/// Settings of a strategy's replicas and gradient all-reduce.
struct StrategyOptions {
  int threads_per_replica = 0;           ///< 0: the machine's cores divided among the replicas
  std::size_t bucket_bytes = 25u << 20;  ///< gradient fusion bucket size (PyTorch DDP's default)
  /// MultiWorkerMirroredStrategy only: how long a worker waits for its peers in one collective
  /// before it reports the ranks that did not arrive and stops the job (a dead or stopped peer
  /// otherwise hangs everyone). The KERASCPP_COLLECTIVE_TIMEOUT variable (seconds) overrides it.
  std::chrono::seconds collective_timeout{300};
};
/// MultiWorkerMirroredStrategy's options (the same as StrategyOptions).
using MultiWorkerOptions = StrategyOptions;

class StrategyImpl;  ///< engine-side implementation
class Strategy;

}  // namespace kerascpp::distribute

namespace kerascpp::detail {
/// The engine's door to a strategy's implementation (the training loops, the model's replica
/// binding); not part of the API a user writes.
const std::shared_ptr<distribute::StrategyImpl>& strategy_impl(const distribute::Strategy& strategy);
}  // namespace kerascpp::detail

namespace kerascpp::distribute {

/// Owns the replicas (one per device, each with a thread and a Backend), runs steps on them and all-reduces between
/// them.
class Strategy {
 public:
  Strategy();                           ///< default: one replica on cpu:0 using every core
  int num_replicas_in_sync() const;     ///< over every worker: workers x local replicas
  int num_workers() const;              ///< processes of a multi-worker job; 1 otherwise
  std::vector<Device> devices() const;  ///< this worker's devices
  std::string describe() const;         ///< "MirroredStrategy(cpu:0, cpu:1; SharedMemoryAllReduce)"
  /// True on worker 0, the one that writes checkpoints, logs and weights files (always true on one worker).
  bool is_chief() const { return worker_index() == 0; }
  /// This process's rank among the workers (0 on a single worker).
  int worker_index() const;
  /// Runs fn on every replica in parallel (replica 0 on the calling thread's partner); returns when all
  /// finished. An exception on any replica aborts the others' collectives and is rethrown here.
  void run(const std::function<void(ReplicaContext&)>& fn) const;
  /// Reduces one value per replica (as returned by run-collected results).
  double reduce(ReduceOp op, const std::vector<double>& per_replica) const;
  /// Splits `global` rows into num_replicas_in_sync contiguous shards: sizes differ by at most one
  /// and the first replicas take the extra rows; shards may be empty. Worker w's replicas take the
  /// shards [w * local replicas, (w + 1) * local replicas): every worker reads the same global
  /// batches (TensorFlow's DATA auto-shard policy) and works on its share.
  std::vector<std::pair<std::int64_t, std::int64_t>> shard_ranges(std::int64_t global_rows) const;
  /// The rows of `global` that replica ctx works on, on its device (a view, no copy, on the host).
  Tensor shard(const ReplicaContext& ctx, const Tensor& global) const;

  friend const std::shared_ptr<StrategyImpl>& detail::strategy_impl(const Strategy& strategy);

 protected:
  /// A strategy over `impl` (the subclasses' constructors make it).
  explicit Strategy(std::shared_ptr<StrategyImpl> impl) : impl_(std::move(impl)) {}
  /// The implementation; copies of a Strategy share it.
  std::shared_ptr<StrategyImpl> impl_;
};

/// OneDeviceStrategy's implementation, on `device`.
std::shared_ptr<StrategyImpl> make_one_device_impl(const std::string& device, StrategyOptions options);
/// `devices` must not be empty (ValueError); make_default_mirrored_impl takes every local device.
std::shared_ptr<StrategyImpl> make_mirrored_impl(std::vector<std::string> devices, CrossDeviceOpsKind ops,
                                                 StrategyOptions options);
/// MirroredStrategy<>()'s implementation: every local device.
std::shared_ptr<StrategyImpl> make_default_mirrored_impl(CrossDeviceOpsKind ops);
/// `devices` empty: every local device (every GPU, or cpu:0).
std::shared_ptr<StrategyImpl> make_multi_worker_impl(std::vector<std::string> devices, CrossDeviceOpsKind ops,
                                                     StrategyOptions options);
/// Local devices: every GPU, or ["cpu:0"] when there is none.
std::vector<std::string> local_devices();
/// The one line MirroredStrategy<>() prints on stderr when it falls back to the CPU, with the reason.
std::string no_gpu_notice();

/// TensorFlow's OneDeviceStrategy: one replica on one device.
class OneDeviceStrategy : public Strategy {
 public:
  /// One replica on `device` ("cpu:0", "gpu:1").
  explicit OneDeviceStrategy(const std::string& device = "cpu:0", StrategyOptions options = {})
      : Strategy(make_one_device_impl(device, options)) {}
};

template <class CrossDeviceOps = Auto>
/// TensorFlow's MirroredStrategy: one replica per local device, variables mirrored, gradients all-reduced with
/// CrossDeviceOps.
class MirroredStrategy : public Strategy {
 public:
  /// All local devices (every GPU; the CPU when there is none).
  MirroredStrategy() : Strategy(make_default_mirrored_impl(CrossDeviceOps::kind)) {}
  /// Explicit devices, e.g. {"gpu:0", "gpu:1"} or {"cpu:0", "cpu:1"} (CPU replicas, like TF's logical
  /// CPUs). An empty list is refused (ValueError), as TensorFlow does.
  explicit MirroredStrategy(std::vector<std::string> devices, StrategyOptions options = {})
      : Strategy(make_mirrored_impl(std::move(devices), CrossDeviceOps::kind, options)) {}
  /// `cpu_replicas` CPU replicas.
  explicit MirroredStrategy(int cpu_replicas, StrategyOptions options = {})
      : Strategy(make_mirrored_impl(cpu_device_names(cpu_replicas), CrossDeviceOps::kind, options)) {}

 private:
  static std::vector<std::string> cpu_device_names(int n) {
    std::vector<std::string> d;
    for (int i = 0; i < n; ++i) d.push_back("cpu:" + std::to_string(i));
    if (d.empty()) d.push_back("cpu:-1");  // rejected with a clear error by make_mirrored_impl
    return d;
  }
};

/// Many processes (workers), launched by mpirun or srun, each mirroring over its local devices:
/// TensorFlow's MultiWorkerMirroredStrategy / CollectiveAllReduceStrategy. Gradient buckets are
/// summed inside the worker first, then across workers with non-blocking MPI all-reduces
/// overlapped with backward; losses and metrics cover every replica of every worker. Rank 0 is
/// the chief: only it writes checkpoints, logs and weights files. Started without an MPI launcher
/// it runs as a single worker and says so on stderr.
template <class CrossDeviceOps = Auto>
class MultiWorkerMirroredStrategy : public Strategy {
 public:
  /// Every local GPU per worker, or cpu:0 when there is none.
  MultiWorkerMirroredStrategy() : Strategy(make_multi_worker_impl({}, CrossDeviceOps::kind, {})) {}
  /// These devices in each worker; an empty list is refused (ValueError).
  explicit MultiWorkerMirroredStrategy(std::vector<std::string> local_devices, MultiWorkerOptions options = {})
      : Strategy(make_multi_worker_impl(checked(std::move(local_devices)), CrossDeviceOps::kind, options)) {}
  /// `cpu_replicas_per_worker` CPU replicas in each worker.
  explicit MultiWorkerMirroredStrategy(int cpu_replicas_per_worker, MultiWorkerOptions options = {})
      : Strategy(make_multi_worker_impl(cpu_devices(cpu_replicas_per_worker), CrossDeviceOps::kind, options)) {}

 private:
  static std::vector<std::string> checked(std::vector<std::string> d) {
    if (d.empty()) d.push_back("cpu:-1");  // an explicit empty list is refused, as MirroredStrategy does
    return d;
  }
  static std::vector<std::string> cpu_devices(int n) {
    std::vector<std::string> d;
    for (int i = 0; i < n; ++i) d.push_back("cpu:" + std::to_string(i));
    return checked(std::move(d));
  }
};
/// TensorFlow's older name of MultiWorkerMirroredStrategy.
using CollectiveAllReduceStrategy = MultiWorkerMirroredStrategy<>;

}  // namespace kerascpp::distribute
