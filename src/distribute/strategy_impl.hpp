// Engine side of a Strategy: replica contexts, worker threads and the collectives between them.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "kerascpp/distribute/strategy.hpp"

namespace kerascpp::distribute {

class ParameterServerTask;  // distribute/parameter_server/ps_task.hpp

class StrategyImpl {
 public:
  virtual ~StrategyImpl() = default;
  virtual std::string name() const = 0;
  virtual int num_replicas() const = 0;  // this process's replicas
  virtual std::vector<Device> devices() const = 0;
  virtual CrossDeviceOpsKind cross_device_ops() const = 0;
  virtual int worker_index() const { return 0; }
  // CentralStorageStrategy: each trainable variable (and its optimizer slots) is kept once on the
  // host, read by every replica, and updated once per step by replica 0 with the summed gradient.
  virtual bool central_variables() const { return false; }
  // ParameterServerStrategy: this task's role (the variables live on ps tasks); null otherwise.
  virtual ParameterServerTask* parameter_server() { return nullptr; }
  virtual int num_workers() const { return 1; }
  // Multi-worker jobs: every worker's `mine` concatenated in worker order / `t` summed over the
  // workers in place (identity on a single worker). `what` names the data in stall reports.
  virtual std::vector<double> gather_over_workers(const std::vector<double>& mine, const char* /*what*/) {
    return mine;
  }
  virtual void sum_over_workers(Tensor& /*t*/, const char* /*what*/) {}
  virtual void run(const std::function<void(ReplicaContext&)>& fn) = 0;
  virtual ReplicaContext& context(int replica) = 0;
  virtual std::size_t bucket_bytes() const = 0;
};

}  // namespace kerascpp::distribute
