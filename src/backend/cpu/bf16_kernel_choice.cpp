#include "backend/cpu/bf16_kernel_choice.hpp"

#include <dnnl.hpp>

namespace kerascpp::cpu {

// Measured against float32 on the same machine (bench/README.md, "Mixed precision"):
// - no bfloat16 instructions (plain AVX-512): oneDNN 2.6 still offers bf16 kernels (matmul gemm:jit,
//   convolution jit_bf16:avx512_core) that emulate the dot products: 0.30x (MLP b1024) and 0.38x
//   (CNN b128) float32's training speed on an Intel Xeon, against 0.90x and 0.85x with float32
//   kernels on rounded operands;
// - AVX512-BF16 without AMX on an Intel Xeon (family 6 model 207 with AMX hidden by its VM):
//   oneDNN's brgemm bf16 matmuls ran at 0.6x its float32 ones on every MLP shape, the training
//   steps at 0.58x and 0.74x, against 0.88x and 0.84x with float32 kernels on rounded operands;
// - AVX512-BF16 on AMD Zen 4: 1.42x and 1.33x; AMX on an Intel Xeon: 1.95x and 1.41x.
Bf16KernelChoice choose_bf16_kernels(bool bf16_instructions, bool amx, bool intel) {
  if (amx) return {true, {}};
  if (!bf16_instructions)
    return {false,
            "no bfloat16 instructions on this processor (AVX512-BF16 or AMX); oneDNN's bf16 kernels would emulate "
            "them, slower than float32"};
  if (intel)
    return {false,
            "AVX512-BF16 without AMX on an Intel processor: oneDNN's bf16 kernels run at about 0.6x its float32 ones "
            "there, so bf16 is computed by the float32 kernels"};
  return {true, {}};
}

Bf16KernelChoice choose_bf16_kernels_here() {
  // cpu_isa values are bit masks of features; the effective ISA honours ONEDNN_MAX_CPU_ISA.
  const auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
  const auto has = [isa](dnnl::cpu_isa level) {
    const auto bits = static_cast<unsigned>(level);
    return (isa & bits) == bits;
  };
#if defined(__x86_64__) || defined(__i386__)
  const bool intel = __builtin_cpu_is("intel");
#else
  const bool intel = false;
#endif
  return choose_bf16_kernels(has(dnnl::cpu_isa::avx512_core_bf16), has(dnnl::cpu_isa::avx512_core_amx), intel);
}

}  // namespace kerascpp::cpu
