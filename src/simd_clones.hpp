// KERASCPP_SIMD_CLONES: a function attribute that makes GCC/Clang emit AVX-512, AVX2 and baseline
// (x86-64-v2) builds of a loop, the widest of which the dynamic loader picks for the CPU (an
// ifunc). Used only where every build gives the same bits (exact operations, or contraction off).
// ThreadSanitizer builds define KERASCPP_NO_TARGET_CLONES and keep the baseline only: the ifunc
// resolver runs before that sanitizer's runtime exists and crashes it. Other processors than
// x86-64 have no such builds either.
// KERASCPP_SIMD_AVX2_ONLY (CMake option of the same name) keeps the AVX2 build alone, so that a
// suite on an AVX-512 machine runs the code an AVX2-only processor gets (scripts/asan.sh does).
#pragma once

#if defined(KERASCPP_SIMD_AVX2_ONLY) && defined(__x86_64__) && !defined(KERASCPP_NO_TARGET_CLONES)
#define KERASCPP_SIMD_PINNED_AVX2 1
#endif

#ifdef KERASCPP_SIMD_PINNED_AVX2
#define KERASCPP_SIMD_CLONES __attribute__((target("avx2")))
// GCC gives a lambda written inside such a function the function's target, so a helper forced
// inline into both must carry it too; with clones, every helper stays at the baseline target.
#define KERASCPP_SIMD_INLINE_TARGET __attribute__((target("avx2")))
#elif defined(KERASCPP_NO_TARGET_CLONES) || !defined(__x86_64__)
#define KERASCPP_SIMD_CLONES
#else
#define KERASCPP_SIMD_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#endif
#ifndef KERASCPP_SIMD_INLINE_TARGET
#define KERASCPP_SIMD_INLINE_TARGET
#endif

// KERASCPP_SIMD_CLONES_V4: the same with x86-64-v4 (AVX-512 F, BW, CD, DQ, VL: every AVX-512
// processor since Skylake-SP) as the wide build, for loops that blend bytes or 16-bit lanes under
// a mask: AVX-512F alone has no such blends and the compiler emulates them (max_pool_disjoint's
// bfloat16 backward pass took 1.8-2.0 ms instead of 0.24). Clang cannot multiversion function
// templates, so its builds keep the baseline there.
#ifdef KERASCPP_SIMD_PINNED_AVX2
#define KERASCPP_SIMD_CLONES_V4 __attribute__((target("avx2")))
#elif defined(KERASCPP_NO_TARGET_CLONES) || !defined(__x86_64__) || defined(__clang__)
#define KERASCPP_SIMD_CLONES_V4
#else
#define KERASCPP_SIMD_CLONES_V4 __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#endif
