// The process-wide state clear_session() resets, each owned by its own file: automatic names
// (layer.cpp), the random seed stream (random.cpp) and cached datasets (fashion_mnist.cpp).
#pragma once

namespace kerascpp::detail {

void reset_unique_names();
void restart_random_stream();
void clear_dataset_cache();

}  // namespace kerascpp::detail
