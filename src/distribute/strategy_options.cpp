#include "distribute/strategy_options.hpp"

#include <charconv>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <string>
#include <string_view>

#include "check.hpp"
#include "core/knobs.hpp"

namespace kerascpp::distribute {

void check_strategy_options(const StrategyOptions& options, const char* strategy) {
  KERASCPP_CHECK_VALUE(
      options.threads_per_replica >= 0,
      "{}: threads_per_replica must be >= 0 (0: the machine's cores divided among the replicas), got {}", strategy,
      options.threads_per_replica);
  KERASCPP_CHECK_VALUE(options.bucket_bytes > 0,
                       "{}: bucket_bytes must be > 0 (the gradient fusion bucket size; the default is 25 MiB), got 0",
                       strategy);
  KERASCPP_CHECK_VALUE(
      options.collective_timeout.count() > 0,
      "{}: collective_timeout must be > 0 s (how long a worker waits for its peers; default 300 s), got {}", strategy,
      options.collective_timeout.count());
}

namespace {
// A numeric environment variable the backends read: when set, it must be a whole number in [lo, hi].
void check_count_variable(const char* name, long long lo, long long hi, const char* meaning) {
  const char* value = ::kerascpp::detail::knob(name);
  if (!value) return;
  const char* end = value + std::strlen(value);
  long long n = 0;
  auto [ptr, ec] = std::from_chars(value, end, n);
  KERASCPP_CHECK_VALUE(
      ec == std::errc() && ptr == end && n >= lo && n <= hi,
      "environment variable {}='{}' is not a whole number in [{}, {}]; set it to {}, or unset it to use "
      "the default",
      name, value, lo, hi, meaning);
}

// A switch the backends read: when set, it must be one of `choices` (the first is the default).
void check_choice_variable(const char* name, std::initializer_list<std::string_view> choices, const char* meaning) {
  const char* value = ::kerascpp::detail::knob(name);
  if (!value) return;
  for (std::string_view c : choices)
    if (c == value) return;
  std::string listed;
  for (std::string_view c : choices) listed += (listed.empty() ? "" : ", ") + std::string(c);
  KERASCPP_CHECK_VALUE(false, "environment variable {}='{}' is not one of {}; {}, or unset it to use the default", name,
                       value, listed, meaning);
}
}  // namespace

void check_thread_environment() {
  // The backends parse these leniently (atoi / strtoull), taking "abc" or "0" as "not set" without
  // a word; refusing them here, where every Strategy is made, keeps a typo from going unnoticed.
  check_count_variable("KERASCPP_MAX_THREADS", 1, 1 << 20,
                       "the most threads kerascpp may use (e.g. KERASCPP_MAX_THREADS=4)");
  check_count_variable("KERASCPP_GPU_WORKSPACE_MB", 1, (1LL << 24) - 1,
                       "the cuDNN/cuBLAS workspace limit in MiB per GPU (e.g. KERASCPP_GPU_WORKSPACE_MB=256)");
  // The CUDA backend's measurement switches (docs/environment.md); it reads them without checking.
  check_choice_variable("KERASCPP_CUDNN_ALGO_SEARCH", {"heuristic", "find"},
                        "find times every convolution algorithm once per shape");
  check_choice_variable("KERASCPP_CUDNN_VERBOSE", {"0", "1"}, "1 prints each convolution's algorithm");
  check_choice_variable("KERASCPP_GPU_GRAPHS", {"0", "1"},
                        "0 runs predict op by op instead of replaying a recorded CUDA graph");
  check_choice_variable("KERASCPP_GPU_BN", {"own", "cudnn"}, "cudnn runs batch norm on cuDNN's kernels");
  check_choice_variable("KERASCPP_GPU_UPLOAD", {"thread", "caller"},
                        "caller fills the pinned buffers of the next batch on the fit loop's thread");
  check_choice_variable("KERASCPP_GPU_PHASES", {"0", "1", "layers"},
                        "1 prints each training and predict phase's host and GPU time per step when the process "
                        "ends, layers also each layer of an inference forward");
  check_choice_variable("KERASCPP_GPU_CONV", {"timed", "pointwise", "gemm", "nchw", "cudnn"},
                        "timed (the default) runs 1x1 convolutions as cuBLAS products and each other one on the "
                        "fastest of cuBLAS, cuDNN and cuDNN over NCHW copies, pointwise only the 1x1 ones on cuBLAS, "
                        "gemm every convolution, nchw every one on cuDNN's NCHW kernels, cudnn none on cuBLAS");
}

std::chrono::milliseconds collective_timeout(const StrategyOptions& options) {
  check_count_variable(
      "KERASCPP_COLLECTIVE_TIMEOUT", 1, 1 << 24,
      "the seconds a worker waits for its peers in one collective (e.g. KERASCPP_COLLECTIVE_TIMEOUT=60)");
  const char* value = ::kerascpp::detail::knob("KERASCPP_COLLECTIVE_TIMEOUT");
  return value ? std::chrono::seconds(std::atoll(value)) : options.collective_timeout;
}

}  // namespace kerascpp::distribute
