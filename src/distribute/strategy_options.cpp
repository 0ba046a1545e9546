#include "distribute/strategy_options.hpp"

#include <charconv>
#include <cstdlib>
#include <cstring>

#include "check.hpp"

namespace kerascpp::distribute {

void check_strategy_options(const StrategyOptions& options, const char* strategy) {
  KERASCPP_CHECK(options.threads_per_replica >= 0, ValueError,
                 "{}: threads_per_replica must be >= 0 (0: the machine's cores divided among the replicas), got {}",
                 strategy, options.threads_per_replica);
  KERASCPP_CHECK(options.bucket_bytes > 0, ValueError,
                 "{}: bucket_bytes must be > 0 (the gradient fusion bucket size; the default is 25 MiB), got 0",
                 strategy);
}

void check_thread_environment() {
  // The CPU backend reads the variable with atoi, which takes "abc" and "0" as "no cap" without
  // a word; refusing them here, where every Strategy is made, keeps a typo from going unnoticed.
  const char* value = std::getenv("KERASCPP_MAX_THREADS");
  if (!value) return;
  const char* end = value + std::strlen(value);
  long long n = 0;
  auto [ptr, ec] = std::from_chars(value, end, n);
  KERASCPP_CHECK(ec == std::errc() && ptr == end && n >= 1, ValueError,
                 "environment variable KERASCPP_MAX_THREADS='{}' is not a whole number >= 1; set it to the most "
                 "threads kerascpp may use (e.g. KERASCPP_MAX_THREADS=4) or unset it to use every core",
                 value);
}

}  // namespace kerascpp::distribute
