// CentralStorageStrategy: the local mode of parameter servers (variables once on the host,
// computation replicated over local replicas, synchronous).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "kerascpp/distribute/strategy.hpp"

namespace kerascpp::distribute {

/// CentralStorageStrategy's implementation over `compute_devices` (CPU replicas; ValueError otherwise).
std::shared_ptr<StrategyImpl> make_central_storage_impl(std::vector<std::string> compute_devices,
                                                        StrategyOptions options);

/// TensorFlow's CentralStorageStrategy (the local mode of parameter servers): each trainable variable
/// and its optimizer slots are kept once, on the host; the computation is replicated over the
/// compute devices as MirroredStrategy does (each replica takes its shard of the global batch),
/// and each step's gradients are summed over the replicas and applied once, synchronously.
/// Non-trainable variables (BatchNormalization's moving statistics) stay one per replica.
/// Compute devices are CPU replicas here; GPU compute devices are refused (ValueError) until
/// they are supported: use MirroredStrategy on GPUs.
class CentralStorageStrategy : public Strategy {
 public:
  /// One replica on cpu:0 (TensorFlow: every local GPU, or the CPU when there is none).
  CentralStorageStrategy() : Strategy(make_central_storage_impl({"cpu:0"}, {})) {}
  /// Explicit compute devices, e.g. {"cpu:0", "cpu:1"}; an empty list is refused (ValueError).
  explicit CentralStorageStrategy(std::vector<std::string> compute_devices, StrategyOptions options = {})
      : Strategy(make_central_storage_impl(std::move(compute_devices), options)) {}
  /// `cpu_replicas` CPU replicas (at least 1).
  explicit CentralStorageStrategy(int cpu_replicas, StrategyOptions options = {})
      : Strategy(make_central_storage_impl(cpu_names(cpu_replicas), options)) {}

 private:
  static std::vector<std::string> cpu_names(int n) {
    std::vector<std::string> d;
    for (int i = 0; i < n; ++i) d.push_back("cpu:" + std::to_string(i));
    if (d.empty()) d.push_back("cpu:-1");  // rejected with a clear error by make_central_storage_impl
    return d;
  }
};

}  // namespace kerascpp::distribute
