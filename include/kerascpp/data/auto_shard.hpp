// auto_shard: one worker's part of a dataset under its Options::auto_shard_policy, as tf.data's
// auto-sharding splits the input of a multi-worker strategy (docs/data.md, "Auto-sharding").
#pragma once
#include <cstdint>

#include "kerascpp/data/dataset.hpp"

namespace kerascpp::data {

/// Worker `worker_index`'s dataset out of `num_workers`, by dataset.options().auto_shard_policy:
/// - FILE: every file-based source (TextLineDataset, TFRecordDataset, CsvDataset, the CIFAR
///   reader) keeps the files worker_index, worker_index + num_workers, ... of its list, opened
///   wherever it sits in the pipeline; ValueError when the pipeline has none, or one has fewer
///   files than workers.
/// - DATA: the elements worker_index, worker_index + num_workers, ... of the whole pipeline
///   (Dataset::shard at its end): every worker still reads everything.
/// - AUTO: FILE when the pipeline has a file-based source with at least num_workers files,
///   otherwise DATA.
/// - OFF: the dataset unchanged.
/// One worker (num_workers == 1) always gets the dataset unchanged. Files that an interleave's
/// function opens are inner pipelines of their own and are not FILE-sharded: list the files in
/// the source instead, or use DATA.
Dataset auto_shard(const Dataset& dataset, std::int64_t num_workers, std::int64_t worker_index);

}  // namespace kerascpp::data
