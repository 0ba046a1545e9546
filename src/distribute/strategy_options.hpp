// Checks of what a Strategy is built from: its options and the environment variables that set
// the replicas' thread budgets. Run before any backend or thread exists, so a bad value costs
// nothing and is named (option or variable) instead of being silently replaced by a default.
#pragma once
#include "kerascpp/distribute/strategy.hpp"

namespace kerascpp::distribute {

// Throws ValueError naming `strategy` and the option when threads_per_replica < 0 or bucket_bytes == 0.
void check_strategy_options(const StrategyOptions& options, const char* strategy);

// KERASCPP_MAX_THREADS (caps every backend's threads) and KERASCPP_GPU_WORKSPACE_MB (the GPU
// workspace limit), when set, must be whole numbers >= 1; anything else (empty, "abc", "0", "-2",
// "4x") throws ValueError naming the variable and the fix.
void check_thread_environment();

// The stall bound of a multi-worker job: KERASCPP_COLLECTIVE_TIMEOUT (seconds, checked like the
// variables above) when set, else options.collective_timeout.
std::chrono::milliseconds collective_timeout(const StrategyOptions& options);

}  // namespace kerascpp::distribute
