// ParameterServerStrategy: variables live on the ps tasks of a TF_CONFIG cluster, workers compute
// gradients and push them there, the chief coordinates. Plus TensorFlow's variable partitioners,
// which split a large variable (an embedding table) along axis 0 into shards over the ps tasks.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kerascpp/distribute/cluster_resolver.hpp"
#include "kerascpp/distribute/strategy.hpp"

namespace kerascpp::distribute {

/// A variable partitioner (TensorFlow's tf.distribute.experimental.partitioners): given a variable's
/// shape and dtype, the number of partitions along each axis (only axis 0 is ever split, as
/// TensorFlow does: the result is [n, 1, 1, ...]).
using VariablePartitioner = std::function<std::vector<std::int64_t>(const Shape& shape, DType dtype)>;

/// TensorFlow's FixedShardsPartitioner: min(num_shards, shape[0]) shards along axis 0.
class FixedShardsPartitioner {
 public:
  /// `num_shards` >= 1 (ValueError otherwise).
  explicit FixedShardsPartitioner(int num_shards);
  /// The partitions of a variable of `shape` (ValueError for a scalar).
  std::vector<std::int64_t> operator()(const Shape& shape, DType dtype) const;

 private:
  int num_shards_;
};

/// TensorFlow's MinSizePartitioner: as many shards as keep each at least `min_shard_bytes`
/// (ceil(total bytes / min_shard_bytes)), at most `max_shards` and at most shape[0], at least 1.
class MinSizePartitioner {
 public:
  /// TensorFlow's defaults: 256 KiB, 1 shard, 16 bytes per string element.
  explicit MinSizePartitioner(std::int64_t min_shard_bytes = 256 << 10, int max_shards = 1,
                              std::int64_t bytes_per_string = 16);
  /// The partitions of a variable of `shape` (ValueError for a scalar).
  std::vector<std::int64_t> operator()(const Shape& shape, DType dtype) const;

 private:
  std::int64_t min_shard_bytes_;
  int max_shards_;
};

/// TensorFlow's MaxSizePartitioner: shards of at most `max_shard_bytes` (whole rows of axis 0: a
/// shard holds max(1, floor(max_shard_bytes / row bytes)) rows), capped at `max_shards` when given.
class MaxSizePartitioner {
 public:
  /// `max_shard_bytes` >= 1; `max_shards` >= 1 when given (ValueError otherwise).
  explicit MaxSizePartitioner(std::int64_t max_shard_bytes, std::optional<int> max_shards = std::nullopt,
                              std::int64_t bytes_per_string = 16);
  /// The partitions of a variable of `shape` (ValueError for a scalar).
  std::vector<std::int64_t> operator()(const Shape& shape, DType dtype) const;

 private:
  std::int64_t max_shard_bytes_;
  std::optional<int> max_shards_;
};

/// The rows [begin, end) of axis 0 each of `shards` shards of a `rows`-row variable holds, as
/// TensorFlow splits a partitioned variable: rows / shards each, the first rows % shards one more.
std::vector<std::pair<std::int64_t, std::int64_t>> shard_rows(std::int64_t rows, std::int64_t shards);

/// ParameterServerStrategy's implementation (see the class).
std::shared_ptr<StrategyImpl> make_parameter_server_impl(const TFConfigClusterResolver& resolver,
                                                         VariablePartitioner partitioner, StrategyOptions options);

/// TensorFlow's ParameterServerStrategy over a TF_CONFIG cluster with a chief, workers and ps tasks.
/// Every task runs the same program. Each trainable variable lives on a ps task (whole variables
/// round-robin over the ps tasks; a variable the partitioner splits has its shards placed
/// round-robin too), with its optimizer slots: the ps applies the optimizer to pushed gradients.
/// The chief is the coordinator: `model.fit` (which then requires `steps_per_epoch`) hands each
/// batch to a worker, which pulls the variables, computes the gradients and pushes them; the
/// chief's callbacks, logs and history see every step. On a worker `model.fit` serves the chief's
/// steps and returns when the chief's fit ends. Constructing the strategy on a ps task serves the
/// variables until the chief ends the job, then ends the process (exit status 0, or 1 when the
/// job failed). Steps run one at a time (synchronous). Every request carries the job's token
/// (`KERASCPP_CLUSTER_TOKEN`, required) and every server listens only on its TF_CONFIG address;
/// a lost task makes every other one stop within `collective_timeout` with an error naming it.
class ParameterServerStrategy : public Strategy {
 public:
  /// The cluster TF_CONFIG describes; no partitioner: whole variables.
  ParameterServerStrategy() : ParameterServerStrategy(TFConfigClusterResolver()) {}
  /// `resolver`'s cluster (at least one ps and one worker); `partitioner` splits large variables.
  explicit ParameterServerStrategy(const TFConfigClusterResolver& resolver, VariablePartitioner partitioner = {},
                                   StrategyOptions options = {})
      : Strategy(make_parameter_server_impl(resolver, std::move(partitioner), options)) {}
};

}  // namespace kerascpp::distribute
