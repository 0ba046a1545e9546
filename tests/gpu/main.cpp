// Entry point of the GPU suite (kerascpp_gpu_tests). Without a GPU it runs nothing: it prints
// "SKIPPED: no GPU: <reason>" and the test cases that would have run, and exits with 77, which
// ctest (SKIP_RETURN_CODE 77) reports as "Skipped". With a GPU it runs every test case.
// KERASCPP_REQUIRE_GPU=1 turns the skip into a failure (exit 1), for CI machines that must have one.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "backend/gpu_support.hpp"

namespace {

constexpr int kSkipReturnCode = 77;

bool gpu_required() {
  const char* v = std::getenv("KERASCPP_REQUIRE_GPU");
  return v && *v && std::strcmp(v, "0") != 0;
}

}  // namespace

int main(int argc, char** argv) {
  const auto& gpus = kerascpp::detail::gpu_availability();
  doctest::Context context;
  context.applyCommandLine(argc, argv);

  if (gpus.device_count == 0) {
    std::cout << "SKIPPED: no GPU: "
              << (gpus.reason.empty() ? std::string("the CUDA runtime reports no device") : gpus.reason)
              << (gpus.built ? "" : " (this build has no CUDA backend)") << "\n"
              << "These GPU test cases would have run:" << std::endl;
    // list-test-cases is a flag (Context::setOption would pass "=true", which it ignores).
    const char* list_argv[] = {argc > 0 ? argv[0] : "kerascpp_gpu_tests", "--list-test-cases"};
    context.applyCommandLine(2, list_argv);
    context.run();
    std::cout.flush();
    if (gpu_required()) {
      std::cout << "FAILED: KERASCPP_REQUIRE_GPU is set but no GPU is available" << std::endl;
      return 1;
    }
    return kSkipReturnCode;
  }

  std::cout << "kerascpp GPU suite: " << gpus.device_count << " GPU(s) visible" << std::endl;
  return context.run();
}
