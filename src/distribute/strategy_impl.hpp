// Engine side of a Strategy: replica contexts, worker threads and the collectives between them.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "kerascpp/distribute.hpp"

namespace kerascpp::distribute {

class StrategyImpl {
 public:
  virtual ~StrategyImpl() = default;
  virtual std::string name() const = 0;
  virtual int num_replicas() const = 0;
  virtual std::vector<Device> devices() const = 0;
  virtual CrossDeviceOpsKind cross_device_ops() const = 0;
  virtual int worker_index() const { return 0; }
  virtual void run(const std::function<void(ReplicaContext&)>& fn) = 0;
  virtual ReplicaContext& context(int replica) = 0;
  virtual std::size_t bucket_bytes() const = 0;
};

}  // namespace kerascpp::distribute
