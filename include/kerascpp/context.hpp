// ReplicaContext: what a layer sees while it runs on one replica — the replica's index, its
// Backend (device + thread budget), its RNG stream and a way to all-reduce with its peers.
#pragma once
#include <vector>

#include "kerascpp/backend.hpp"
#include "kerascpp/random.hpp"

namespace kerascpp {

// Collective operations between the replicas of one strategy, called from inside a replica
// step by every replica in the same order (like NCCL calls).
class CrossReplica {
 public:
  virtual ~CrossReplica() = default;
  virtual int num_replicas() const = 0;
  // Sums each tensor elementwise over all replicas, in place, identically on every replica.
  virtual void all_reduce_sum(int replica, const std::vector<Tensor>& tensors) = 0;
};

struct ReplicaContext {
  int replica_id = 0;
  int num_replicas = 1;
  Backend* backend = nullptr;
  CrossReplica* cross = nullptr;  // null on a single replica
  Rng rng;                        // dropout masks; seeded per replica and step for reproducibility
  bool training = false;
};

}  // namespace kerascpp
