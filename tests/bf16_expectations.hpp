// What the tests expect of bfloat16 on this processor, stated from /proc/cpuinfo and the
// environment, independently of the library's own probe (src/backend/cpu/low_precision.cpp).
#pragma once
#include <cstdlib>
#include <fstream>
#include <string>
#include <string_view>

namespace kerascpp_test {

// The first /proc/cpuinfo line starting with `field` ("flags", "vendor_id"); empty where there is
// none (not Linux on x86).
inline std::string cpuinfo_line(std::string_view field) {
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);)
    if (line.rfind(field, 0) == 0) return line;
  return {};
}

// Whether /proc/cpuinfo lists an ISA flag.
inline bool cpu_has_flag(std::string_view flag) {
  return (cpuinfo_line("flags") + ' ').find(' ' + std::string(flag) + ' ') != std::string::npos;
}

// Whether /proc/cpuinfo names this vendor (GenuineIntel, AuthenticAMD).
inline bool cpu_vendor_is(std::string_view vendor) {
  return cpuinfo_line("vendor_id").find(vendor) != std::string::npos;
}

inline bool env_is(const char* name, std::string_view value) {
  const char* v = std::getenv(name);
  return v && v == value;
}

// Whether bfloat16 must be emulated in this run (false: no claim). oneDNN held to AVX2 has no bf16
// kernel at all (ctest's mixed_precision_emulated). Below bfloat16 instructions, with oneDNN capped
// there (mixed_precision_avx512_without_bf16) or on a processor whose /proc/cpuinfo lists neither
// avx512_bf16 nor amx_bf16, its bf16 kernels only emulate them, slower than float32; on an Intel
// processor with avx512_bf16 but not amx_bf16 they are slower than float32 too. There kerascpp
// emulates unless KERASCPP_BF16_ONEDNN_EMULATION=1 asks for those kernels.
inline bool bf16_must_be_emulated() {
  if (env_is("ONEDNN_MAX_CPU_ISA", "AVX2")) return true;
  if (env_is("KERASCPP_BF16_ONEDNN_EMULATION", "1")) return false;
  if (env_is("ONEDNN_MAX_CPU_ISA", "AVX512_CORE") || env_is("ONEDNN_MAX_CPU_ISA", "AVX512_CORE_VNNI")) return true;
  return !cpu_has_flag("amx_bf16") && (!cpu_has_flag("avx512_bf16") || cpu_vendor_is("GenuineIntel"));
}

// Whether bfloat16 activations must be on: asked for oneDNN's emulating bf16 kernels (ctest's
// bf16_activations_on_onednn_emulation), an AVX-512 processor has them (avx512_core) unless
// oneDNN is capped below it, so bfloat16 must not skip there.
inline bool bf16_activations_must_be_on() {
  return env_is("KERASCPP_BF16_ONEDNN_EMULATION", "1") && cpu_has_flag("avx512bw") &&
         !std::getenv("ONEDNN_MAX_CPU_ISA");
}

}  // namespace kerascpp_test
