// ReplicaContext: what a layer sees while it runs on one replica — the replica's index, its
// Backend (device + thread budget), its RNG stream and a way to all-reduce with its peers.
#pragma once
#include <vector>

#include "kerascpp/backend/backend.hpp"
#include "kerascpp/core/random.hpp"
#include "kerascpp/error.hpp"

namespace kerascpp {

/// Collective operations between the replicas of one strategy, called from inside a replica
/// step by every replica in the same order (like NCCL calls).
class CrossReplica {
 public:
  /// Destroys the implementation.
  virtual ~CrossReplica() = default;
  /// The number of replicas taking part in every call.
  virtual int num_replicas() const = 0;
  /// Sums each tensor elementwise over all replicas, in place, identically on every replica:
  /// the storage the handles in `tensors` refer to is overwritten with the sum.
  virtual void all_reduce_sum(int replica, std::vector<Tensor>& tensors) = 0;
  /// Asynchronous form for gradient buckets: returns at once; the sum is computed by whichever
  /// replica hands in bucket `bucket` last, while the others go on with their backward pass.
  /// `tensors` (the vector and their storage) must stay alive and untouched until
  /// wait_all_reduces() returns; they are overwritten with the sum.
  virtual void begin_all_reduce_sum(int replica, int /*bucket*/, std::vector<Tensor>& tensors) {
    all_reduce_sum(replica, tensors);
  }
  /// Waits until every bucket begun in this step is reduced on every replica.
  virtual void wait_all_reduces(int /*replica*/) {}

  /// Row gradients (TensorFlow's IndexedSlices), between steps' bucket reductions (never while
  /// buckets are in flight). gathers_rows(): whether the two calls below work here; where they do
  /// not, the gradient reducer densifies row gradients and all-reduces them like any other.
  virtual bool gathers_rows() const { return false; }
  /// Every replica's `mine` in replica order (replica_id_in_sync), on every replica.
  virtual std::vector<std::int64_t> all_gather_counts(int /*replica*/, std::int64_t /*mine*/) {
    throw StateError("all_gather_counts: this cross-replica implementation does not gather rows");
  }
  /// Every replica's (ids int64 [n_r], rows float32 [n_r, D]) concatenated in replica order into
  /// all_ids [Σn] / all_rows [Σn, D] (allocated) on every replica.
  virtual void all_gather_rows(int /*replica*/, const Tensor& /*ids*/, const Tensor& /*rows*/, Tensor& /*all_ids*/,
                               Tensor& /*all_rows*/) {
    throw StateError("all_gather_rows: this cross-replica implementation does not gather rows");
  }
};

/// What a layer sees while it runs on one replica: its index, Backend, RNG stream and peers.
struct ReplicaContext {
  int replica_id = 0;    ///< this replica among the replicas of this process: indexes mirrored variables
  int num_replicas = 1;  ///< replicas in sync over every worker of the job (all-reduces span them all)
  /// This replica among all num_replicas (worker * local replicas + replica_id); equals replica_id
  /// on a single worker. Picks the replica's rows of a global batch and its slot in gathered data.
  int replica_id_in_sync = 0;
  /// The replica's device and thread budget: every op of the layer goes through it.
  Backend* backend = nullptr;
  CrossReplica* cross = nullptr;  ///< null on a single replica
  Rng rng;                        ///< dropout masks; seeded per replica and step for reproducibility
  /// True inside a training step (Dropout drops, BatchNormalization uses batch statistics).
  bool training = false;
};

}  // namespace kerascpp
