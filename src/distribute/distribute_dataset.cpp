#include "kerascpp/distribute/distribute_dataset.hpp"

#include "kerascpp/data/auto_shard.hpp"

namespace kerascpp::distribute {

Dataset experimental_distribute_dataset(const Strategy& strategy, const Dataset& dataset) {
  return data::auto_shard(dataset, strategy.num_workers(), strategy.worker_index());
}

}  // namespace kerascpp::distribute
