// Which kernels compute bfloat16 on this processor: oneDNN's bf16 ones, or its float32 ones on
// operands rounded to bfloat16 (the same products: 8-bit by 8-bit mantissas fit float32 exactly).
// Decided by processor features, so a machine always takes the same path (and gives the same
// bits), from what bench/README.md ("Mixed precision") measured on each kind of processor.
#pragma once

#include <string>

namespace kerascpp::cpu {

struct Bf16KernelChoice {
  bool onednn_bf16;  // false: float32 kernels on rounded operands
  std::string why;   // empty when oneDNN's bf16 kernels are taken
};

// `bf16_instructions`: AVX512-BF16 usable (oneDNN's effective ISA); `amx`: AMX's bf16 tiles usable;
// `intel`: the processor's vendor is Intel.
Bf16KernelChoice choose_bf16_kernels(bool bf16_instructions, bool amx, bool intel);

// The same for the processor this runs on, under any ONEDNN_MAX_CPU_ISA cap.
Bf16KernelChoice choose_bf16_kernels_here();

}  // namespace kerascpp::cpu
