#include <fmt/format.h>
#include <fmt/ranges.h>

#include "check.hpp"

#include <iostream>
#include <set>

#include "backend/gpu_support.hpp"
#include "distribute/replica_pool.hpp"
#include "distribute/strategy_options.hpp"
#include "distribute/worker_group.hpp"
#include "kerascpp/distribute/central_storage.hpp"

namespace kerascpp::distribute {

const char* cross_device_ops_name(CrossDeviceOpsKind kind) {
  switch (kind) {
    case CrossDeviceOpsKind::automatic:
      return "Auto";
    case CrossDeviceOpsKind::shared_memory:
      return "SharedMemoryAllReduce";
    case CrossDeviceOpsKind::reduction_to_one_device:
      return "ReductionToOneDevice";
    case CrossDeviceOpsKind::hierarchical_copy:
      return "HierarchicalCopyAllReduce";
    case CrossDeviceOpsKind::nccl:
      return "NcclAllReduce";
  }
  return "?";
}

std::vector<std::string> local_devices() {
  std::vector<std::string> out;
  for (int i = 0; i < detail::gpu_availability().device_count; ++i) out.push_back(fmt::format("gpu:{}", i));
  if (out.empty()) out.push_back("cpu:0");
  return out;
}

std::string no_gpu_notice() {
  return fmt::format("MirroredStrategy: no GPU available ({}); mirroring over the CPU (cpu:0) instead",
                     detail::gpu_availability().reason);
}

namespace {

std::string available_devices_str() {
  std::string s;
  for (auto& d : local_devices()) s += (s.empty() ? "" : ", ") + d;
  return s + " (and any number of CPU replicas cpu:N)";
}

Device check_device(const std::string& name) {
  Device d = Device::parse(name);
  const auto& gpus = detail::gpu_availability();
  KERASCPP_CHECK_DEVICE(
      d.kind != Device::Kind::gpu || d.index < gpus.device_count,
      "device '{}' does not exist: {}. Available devices: {}", name,
      gpus.device_count == 0 ? gpus.reason : fmt::format("this machine has {} GPU(s)", gpus.device_count),
      available_devices_str());
  return d;
}

}  // namespace

std::shared_ptr<StrategyImpl> make_one_device_impl(const std::string& device, StrategyOptions options) {
  check_strategy_options(options, "OneDeviceStrategy");
  check_thread_environment();
  return std::make_shared<ReplicaPool>("OneDeviceStrategy", std::vector<Device>{check_device(device)},
                                       CrossDeviceOpsKind::automatic, options);
}

namespace {

// The checks MirroredStrategy and MultiWorkerMirroredStrategy make of their (local) device list;
// returns the devices and the cross-device ops with Auto resolved.
std::pair<std::vector<Device>, CrossDeviceOpsKind> checked_mirrored_devices(const std::vector<std::string>& names,
                                                                            CrossDeviceOpsKind ops,
                                                                            const StrategyOptions& options) {
  // TensorFlow refuses an explicit empty list too: an empty list is usually a bug in the caller's
  // device arithmetic, and "all devices" would hide it. MirroredStrategy() means all devices.
  KERASCPP_CHECK_VALUE(!names.empty(),
                       "MirroredStrategy: the device list is empty; list at least one device (e.g. {{\"gpu:0\"}} or "
                       "{{\"cpu:0\", \"cpu:1\"}}), or use MirroredStrategy() for every local device");
  KERASCPP_CHECK_VALUE(names.size() != 1 || names[0] != "cpu:-1",
                       "MirroredStrategy: the number of CPU replicas (cpu_replicas) must be at least 1");
  check_strategy_options(options, "MirroredStrategy");
  check_thread_environment();
  std::vector<Device> devices;
  std::set<std::string> seen;
  for (auto& n : names) {
    Device d = Device::parse(n);
    KERASCPP_CHECK_VALUE(seen.insert(d.str()).second,
                         "MirroredStrategy: device '{}' is listed twice; list each device once", n);
    devices.push_back(d);
  }
  for (auto& d : devices)
    KERASCPP_CHECK_VALUE(d.kind == devices.front().kind,
                         "MirroredStrategy: mixed device kinds ({} and {}); a strategy mirrors over devices of "
                         "one kind — use only GPUs or only CPU replicas",
                         devices.front().str(), d.str());
  for (auto& n : names) check_device(n);
  bool gpus = devices.front().kind == Device::Kind::gpu;
  KERASCPP_CHECK_VALUE(gpus || (ops != CrossDeviceOpsKind::nccl && ops != CrossDeviceOpsKind::hierarchical_copy),
                       "MirroredStrategy<{}> needs GPU devices, but the devices are CPU replicas; use "
                       "MirroredStrategy<> (Auto) or SharedMemoryAllReduce / ReductionToOneDevice",
                       cross_device_ops_name(ops));
  KERASCPP_CHECK_VALUE(!gpus || ops != CrossDeviceOpsKind::shared_memory,
                       "MirroredStrategy<SharedMemoryAllReduce> reduces in host memory and needs CPU replicas, but the "
                       "devices are GPUs; use MirroredStrategy<> (NcclAllReduce), HierarchicalCopyAllReduce or "
                       "ReductionToOneDevice");
  if (ops == CrossDeviceOpsKind::automatic) ops = gpus ? CrossDeviceOpsKind::nccl : CrossDeviceOpsKind::shared_memory;
  return {std::move(devices), ops};
}

}  // namespace

std::shared_ptr<StrategyImpl> make_mirrored_impl(std::vector<std::string> names, CrossDeviceOpsKind ops,
                                                 StrategyOptions options) {
  auto [devices, resolved] = checked_mirrored_devices(names, ops, options);
  return std::make_shared<ReplicaPool>("MirroredStrategy", std::move(devices), resolved, options);
}

namespace {

// ReplicaPool with every trainable variable kept once on the host (see central_variables()).
class CentralStoragePool : public ReplicaPool {
 public:
  using ReplicaPool::ReplicaPool;
  bool central_variables() const override { return true; }
  std::string name() const override { return ReplicaPool::name() + " [variables on the host]"; }
};

}  // namespace

std::shared_ptr<StrategyImpl> make_central_storage_impl(std::vector<std::string> names, StrategyOptions options) {
  KERASCPP_CHECK_VALUE(!names.empty(),
                       "CentralStorageStrategy: the compute device list is empty; list at least one device (e.g. "
                       "{{\"cpu:0\", \"cpu:1\"}}), or use CentralStorageStrategy() for one replica on cpu:0");
  KERASCPP_CHECK_VALUE(names.size() != 1 || names[0] != "cpu:-1",
                       "CentralStorageStrategy: the number of CPU replicas (cpu_replicas) must be at least 1");
  for (auto& n : names)
    KERASCPP_CHECK_VALUE(Device::parse(n).kind == Device::Kind::cpu,
                         "CentralStorageStrategy: compute device '{}' is a GPU, and GPU compute devices are not "
                         "supported yet (the variables would have to be copied to each GPU every step); use "
                         "CPU replicas ({{\"cpu:0\", \"cpu:1\"}}) or MirroredStrategy for GPUs",
                         n);
  // The gradients are summed onto replica 0, which alone updates the variables: TensorFlow's
  // ReductionToOneDevice, checked as MirroredStrategy checks its devices.
  auto [devices, ops] = checked_mirrored_devices(names, CrossDeviceOpsKind::reduction_to_one_device, options);
  return std::make_shared<CentralStoragePool>("CentralStorageStrategy", std::move(devices), ops, options);
}

std::shared_ptr<StrategyImpl> make_default_mirrored_impl(CrossDeviceOpsKind ops) {
  std::vector<std::string> names = local_devices();
  if (names.front() == "cpu:0") std::cerr << no_gpu_notice() << '\n';
  return make_mirrored_impl(std::move(names), ops, {});
}

std::shared_ptr<StrategyImpl> make_multi_worker_impl(std::vector<std::string> names, CrossDeviceOpsKind ops,
                                                     StrategyOptions options) {
  check_strategy_options(options, "MultiWorkerMirroredStrategy");
  if (names.empty()) names = local_devices();
  // The local devices are checked (and Auto resolved) exactly as MirroredStrategy does.
  auto [devices, resolved] = checked_mirrored_devices(names, ops, options);
  const auto timeout = collective_timeout(options);  // checks KERASCPP_COLLECTIVE_TIMEOUT even alone
  // The cluster comes from the launcher that started the process (mpirun, srun), else from TF_CONFIG.
  std::shared_ptr<WorkerGroup> workers;
  if (launched_by_mpi_launcher()) workers = join_worker_group(timeout);
  else if (TFConfigClusterResolver::environment_has_tf_config()) {
    TFConfigClusterResolver resolver;
    // As TensorFlow: the evaluator task stands apart from the training workers (they do not count
    // it nor wait for it), so the same program run there gets a strategy over its local devices
    // alone, for the SidecarEvaluator that watches the chief's checkpoints.
    if (resolver.task_type() == "evaluator")
      std::cerr << "MultiWorkerMirroredStrategy: this TF_CONFIG task is the evaluator, which does not train with "
                   "the workers; running as a single worker over "
                << fmt::format("{}", fmt::join(names, ", ")) << " (run SidecarEvaluator here)\n";
    else workers = join_tf_config_group(resolver, timeout);
  } else
    std::cerr << "MultiWorkerMirroredStrategy: not started by mpirun or srun and no TF_CONFIG; running as a single "
                 "worker over "
              << fmt::format("{}", fmt::join(names, ", ")) << '\n';
  return std::make_shared<ReplicaPool>("MultiWorkerMirroredStrategy", std::move(devices), resolved, options,
                                       std::move(workers));
}

Strategy::Strategy() : impl_(make_one_device_impl("cpu:0", {})) {}

int Strategy::num_replicas_in_sync() const { return impl_->num_replicas() * impl_->num_workers(); }
int Strategy::num_workers() const { return impl_->num_workers(); }
std::vector<Device> Strategy::devices() const { return impl_->devices(); }
std::string Strategy::describe() const { return impl_->name(); }
int Strategy::worker_index() const { return impl_->worker_index(); }
void Strategy::run(const std::function<void(ReplicaContext&)>& fn) const { impl_->run(fn); }

double Strategy::reduce(ReduceOp op, const std::vector<double>& per_replica) const {
  double s = 0;
  for (double v : per_replica) s += v;
  return op == ReduceOp::sum || per_replica.empty() ? s : s / static_cast<double>(per_replica.size());
}

std::vector<std::pair<std::int64_t, std::int64_t>> Strategy::shard_ranges(std::int64_t rows) const {
  std::int64_t n = num_replicas_in_sync();
  std::vector<std::pair<std::int64_t, std::int64_t>> out;
  std::int64_t base = rows / n, extra = rows % n, start = 0;
  for (std::int64_t r = 0; r < n; ++r) {
    std::int64_t len = base + (r < extra ? 1 : 0);
    out.emplace_back(start, start + len);
    start += len;
  }
  return out;
}

Tensor Strategy::shard(const ReplicaContext& ctx, const Tensor& global) const {
  KERASCPP_CHECK_SHAPE(global.rank() != 0, "Strategy::shard: the tensor needs a leading batch axis");
  auto [begin, end] = shard_ranges(global.dim(0)).at(static_cast<std::size_t>(ctx.replica_id_in_sync));
  return global.slice(begin, end).to(ctx.backend->device());  // a view on the host; a copy on a GPU
}

}  // namespace kerascpp::distribute

namespace kerascpp::detail {

const std::shared_ptr<distribute::StrategyImpl>& strategy_impl(const distribute::Strategy& strategy) {
  return strategy.impl_;
}

}  // namespace kerascpp::detail
