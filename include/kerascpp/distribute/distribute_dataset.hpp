// experimental_distribute_dataset: a strategy's worker's part of a dataset, by the dataset's
// auto-shard policy (tf.distribute.Strategy.experimental_distribute_dataset).
#pragma once
#include "kerascpp/data/dataset.hpp"
#include "kerascpp/distribute/strategy.hpp"

namespace kerascpp::distribute {

/// This worker's part of `dataset`: data::auto_shard(dataset, strategy.num_workers(),
/// strategy.worker_index()) under dataset.options().auto_shard_policy (FILE, DATA, AUTO or OFF),
/// for a custom training loop on a multi-worker strategy. On one worker: the dataset unchanged.
Dataset experimental_distribute_dataset(const Strategy& strategy, const Dataset& dataset);

}  // namespace kerascpp::distribute
