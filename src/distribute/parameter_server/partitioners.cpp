// TensorFlow's variable partitioners (tf.distribute.experimental.partitioners) and the placement of
// variable shards over the ps tasks. Only axis 0 is ever split, as in TensorFlow.
#include <cmath>

#include "check.hpp"
#include "distribute/parameter_server/ps_task.hpp"

namespace kerascpp::distribute {
namespace {

void check_partitionable(const Shape& shape, const char* who) {
  KERASCPP_CHECK_VALUE(!shape.empty(),
                       "{}: cannot partition a scalar variable (shape ()); partitioners split axis 0 of a variable "
                       "of rank >= 1",
                       who);
}

std::vector<std::int64_t> along_axis0(const Shape& shape, std::int64_t n) {
  std::vector<std::int64_t> out(shape.size(), 1);
  out[0] = std::max<std::int64_t>(1, n);
  return out;
}

double total_bytes(const Shape& shape, DType dtype) {
  double n = 1;
  for (std::int64_t d : shape) n *= static_cast<double>(d);
  return n * static_cast<double>(dtype_size(dtype));
}

}  // namespace

FixedShardsPartitioner::FixedShardsPartitioner(int num_shards) : num_shards_(num_shards) {
  KERASCPP_CHECK_VALUE(num_shards >= 1, "FixedShardsPartitioner: num_shards must be at least 1, got {}", num_shards);
}

std::vector<std::int64_t> FixedShardsPartitioner::operator()(const Shape& shape, DType) const {
  check_partitionable(shape, "FixedShardsPartitioner");
  return along_axis0(shape, std::min<std::int64_t>(num_shards_, shape[0]));
}

MinSizePartitioner::MinSizePartitioner(std::int64_t min_shard_bytes, int max_shards, std::int64_t bytes_per_string)
    : min_shard_bytes_(min_shard_bytes), max_shards_(max_shards) {
  KERASCPP_CHECK_VALUE(min_shard_bytes >= 1, "MinSizePartitioner: min_shard_bytes must be at least 1, got {}",
                       min_shard_bytes);
  KERASCPP_CHECK_VALUE(max_shards >= 1, "MinSizePartitioner: max_shards must be at least 1, got {}", max_shards);
  KERASCPP_CHECK_VALUE(bytes_per_string >= 1, "MinSizePartitioner: bytes_per_string must be at least 1, got {}",
                       bytes_per_string);
}

std::vector<std::int64_t> MinSizePartitioner::operator()(const Shape& shape, DType dtype) const {
  check_partitionable(shape, "MinSizePartitioner");
  // TensorFlow's min_max_variable_partitioner: ceil(total / min slice), bounded by the shards
  // allowed and the rows there are.
  const auto wanted = static_cast<std::int64_t>(std::ceil(total_bytes(shape, dtype) / double(min_shard_bytes_)));
  return along_axis0(shape, std::min({shape[0], std::int64_t{max_shards_}, wanted}));
}

MaxSizePartitioner::MaxSizePartitioner(std::int64_t max_shard_bytes, std::optional<int> max_shards,
                                       std::int64_t bytes_per_string)
    : max_shard_bytes_(max_shard_bytes), max_shards_(max_shards) {
  KERASCPP_CHECK_VALUE(max_shard_bytes >= 1, "MaxSizePartitioner: max_shard_bytes must be at least 1, got {}",
                       max_shard_bytes);
  KERASCPP_CHECK_VALUE(!max_shards || *max_shards >= 1, "MaxSizePartitioner: max_shards must be at least 1, got {}",
                       max_shards.value_or(0));
  KERASCPP_CHECK_VALUE(bytes_per_string >= 1, "MaxSizePartitioner: bytes_per_string must be at least 1, got {}",
                       bytes_per_string);
}

std::vector<std::int64_t> MaxSizePartitioner::operator()(const Shape& shape, DType dtype) const {
  check_partitionable(shape, "MaxSizePartitioner");
  if (shape[0] == 0) return along_axis0(shape, 1);
  // TensorFlow's variable_axis_size_partitioner: whole rows per shard, as many as fit the bound
  // (at least one), and as many shards as that takes (capped by max_shards).
  const double row_bytes = total_bytes(shape, dtype) / static_cast<double>(shape[0]);
  const double rows_per_shard = std::max(1.0, std::floor(static_cast<double>(max_shard_bytes_) / row_bytes));
  auto shards = static_cast<std::int64_t>(std::ceil(static_cast<double>(shape[0]) / rows_per_shard));
  if (max_shards_) shards = std::min<std::int64_t>(shards, *max_shards_);
  return along_axis0(shape, shards);
}

std::vector<std::pair<std::int64_t, std::int64_t>> shard_rows(std::int64_t rows, std::int64_t shards) {
  KERASCPP_CHECK_VALUE(shards >= 1 && rows >= 0, "shard_rows: {} rows cannot be split into {} shards", rows, shards);
  std::vector<std::pair<std::int64_t, std::int64_t>> out;
  std::int64_t begin = 0;
  for (std::int64_t s = 0; s < shards; ++s) {
    const std::int64_t len = rows / shards + (s < rows % shards ? 1 : 0);
    out.emplace_back(begin, begin + len);
    begin += len;
  }
  return out;
}

std::vector<ShardPlacement> place_variables(const std::vector<Variable*>& trainable,
                                            const VariablePartitioner& partitioner, int num_ps) {
  std::vector<ShardPlacement> out;
  int next_ps = 0;
  for (std::size_t v = 0; v < trainable.size(); ++v) {
    const Shape& shape = trainable[v]->shape();
    std::int64_t shards = 1;
    if (partitioner && !shape.empty()) {
      const std::vector<std::int64_t> parts = partitioner(shape, trainable[v]->value(0).dtype());
      KERASCPP_CHECK_VALUE(parts.size() == shape.size() && !parts.empty() && parts[0] >= 1,
                           "ParameterServerStrategy: the variable partitioner returned {} partitions for variable "
                           "'{}' of rank {}; return one count per axis, the first >= 1 (e.g. [n, 1])",
                           parts.size(), trainable[v]->path(), shape.size());
      for (std::size_t a = 1; a < parts.size(); ++a)
        KERASCPP_CHECK_VALUE(parts[a] == 1,
                             "ParameterServerStrategy: the variable partitioner split axis {} of variable '{}'; only "
                             "axis 0 can be partitioned (return [n, 1, ...])",
                             a, trainable[v]->path());
      shards = std::min(parts[0], std::max<std::int64_t>(shape[0], 1));
    }
    const auto rows =
        shape.empty() ? std::vector<std::pair<std::int64_t, std::int64_t>>{{0, 1}} : shard_rows(shape[0], shards);
    for (std::size_t s = 0; s < rows.size(); ++s) {
      out.push_back({static_cast<int>(v), static_cast<int>(s), rows[s].first, rows[s].second, next_ps});
      next_ps = (next_ps + 1) % num_ps;
    }
  }
  return out;
}

}  // namespace kerascpp::distribute
