// Whether this processor lists an ISA flag (avx512_bf16, amx_bf16, avx512bw, ...) in /proc/cpuinfo:
// what the tests expect oneDNN's kernels to be, stated independently of the library's own probe.
#pragma once
#include <fstream>
#include <string>
#include <string_view>

namespace kerascpp_test {

// False where /proc/cpuinfo has no flags line (not Linux on x86).
inline bool cpu_has_flag(std::string_view flag) {
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);)
    if (line.rfind("flags", 0) == 0) return (line + ' ').find(' ' + std::string(flag) + ' ') != std::string::npos;
  return false;
}

}  // namespace kerascpp_test
