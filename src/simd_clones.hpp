// KERASCPP_SIMD_CLONES: a function attribute that makes GCC/Clang emit AVX-512, AVX2 and baseline
// (x86-64-v2) builds of a loop, the widest of which the dynamic loader picks for the CPU (an
// ifunc). Used only where every build gives the same bits (exact operations, or contraction off).
// ThreadSanitizer builds define KERASCPP_NO_TARGET_CLONES and keep the baseline only: the ifunc
// resolver runs before that sanitizer's runtime exists and crashes it. Other processors than
// x86-64 have no such builds either.
#pragma once

#if defined(KERASCPP_NO_TARGET_CLONES) || !defined(__x86_64__)
#define KERASCPP_SIMD_CLONES
#else
#define KERASCPP_SIMD_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#endif
