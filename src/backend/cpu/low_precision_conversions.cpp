// The vector conversions: AVX2 integer arithmetic on the bits for bfloat16 (the same round to
// nearest even as the scalar code, which compilers do not vectorize: a convolution network's
// operands are millions of elements a step, and the scalar loop took as long as the step's
// bf16 convolutions) and F16C for float16. Both are chosen at run time, since the build targets
// x86-64-v2; every processor with AVX2 has F16C. The bfloat16 kernels were compared with the
// scalar conversion on all 2^32 float32 bit patterns once; the tests compare samples and edges.
#include "backend/cpu/low_precision_conversions.hpp"

#include <immintrin.h>

#include "tensor/low_precision.hpp"

namespace kerascpp::cpu {

namespace {

using namespace low_precision;

// __builtin_cpu_init first: this runs as a static initializer, possibly before the compiler
// runtime's own. (clang 14, which builds the fuzz targets, cannot ask for "f16c" by name.)
const bool kHasAvx2 = [] {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") != 0;
}();

// Eight float32 to bfloat16, each in the low half of a 32-bit lane: add 0x7fff plus the kept
// part's lowest bit (ties to even), except NaN, which keeps its top bits and is made quiet.
__attribute__((target("avx2"))) inline __m256i bfloat16_lanes(__m256 v) {
  const __m256i bits = _mm256_castps_si256(v);
  const __m256i odd = _mm256_and_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(1));
  const __m256i rounded = _mm256_add_epi32(bits, _mm256_add_epi32(_mm256_set1_epi32(0x7fff), odd));
  const __m256i nan =
      _mm256_cmpgt_epi32(_mm256_and_si256(bits, _mm256_set1_epi32(0x7fffffff)), _mm256_set1_epi32(0x7f800000));
  const __m256i quiet = _mm256_or_si256(bits, _mm256_set1_epi32(0x400000));
  return _mm256_srli_epi32(_mm256_blendv_epi8(rounded, quiet, nan), 16);
}

__attribute__((target("avx2"))) void narrow_bfloat16_avx2(const float* src, std::uint16_t* dst, std::int64_t n) {
  std::int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    // packus interleaves the two 128-bit halves; the permute puts the 16 results in order.
    const __m256i packed =
        _mm256_packus_epi32(bfloat16_lanes(_mm256_loadu_ps(src + i)), bfloat16_lanes(_mm256_loadu_ps(src + i + 8)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i), _mm256_permute4x64_epi64(packed, 0xd8));
  }
  for (; i < n; ++i) dst[i] = float_to_bfloat16(src[i]);
}

__attribute__((target("avx2"))) void widen_bfloat16_avx2(const std::uint16_t* src, float* dst, std::int64_t n) {
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i wide = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i)));
    _mm256_storeu_ps(dst + i, _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16)));
  }
  for (; i < n; ++i) dst[i] = bfloat16_to_float(src[i]);
}

__attribute__((target("avx2"))) void round_bfloat16_avx2(const float* src, float* dst, std::int64_t n) {
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(dst + i, _mm256_castsi256_ps(_mm256_slli_epi32(bfloat16_lanes(_mm256_loadu_ps(src + i)), 16)));
  for (; i < n; ++i) dst[i] = bfloat16_to_float(float_to_bfloat16(src[i]));
}

__attribute__((target("avx,f16c"))) void narrow_half_f16c(const float* src, std::uint16_t* dst, std::int64_t n) {
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT));
  for (; i < n; ++i) dst[i] = float_to_half(src[i]);
}

__attribute__((target("avx,f16c"))) void widen_half_f16c(const std::uint16_t* src, float* dst, std::int64_t n) {
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i))));
  for (; i < n; ++i) dst[i] = half_to_float(src[i]);
}

__attribute__((target("avx,f16c"))) void round_half_f16c(const float* src, float* dst, std::int64_t n) {
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT)));
  for (; i < n; ++i) dst[i] = half_to_float(float_to_half(src[i]));
}

}  // namespace

void narrow_floats(const float* src, std::uint16_t* dst, DType to, std::int64_t n) {
  const bool bf16 = to == DType::bfloat16;
  if (kHasAvx2) return bf16 ? narrow_bfloat16_avx2(src, dst, n) : narrow_half_f16c(src, dst, n);
  for (std::int64_t i = 0; i < n; ++i) dst[i] = bf16 ? float_to_bfloat16(src[i]) : float_to_half(src[i]);
}

void widen_floats(const std::uint16_t* src, DType from, float* dst, std::int64_t n) {
  const bool bf16 = from == DType::bfloat16;
  if (kHasAvx2) return bf16 ? widen_bfloat16_avx2(src, dst, n) : widen_half_f16c(src, dst, n);
  for (std::int64_t i = 0; i < n; ++i) dst[i] = bf16 ? bfloat16_to_float(src[i]) : half_to_float(src[i]);
}

void round_floats(const float* src, float* dst, DType dtype, std::int64_t n) {
  const bool bf16 = dtype == DType::bfloat16;
  if (kHasAvx2) return bf16 ? round_bfloat16_avx2(src, dst, n) : round_half_f16c(src, dst, n);
  for (std::int64_t i = 0; i < n; ++i)
    dst[i] = bf16 ? bfloat16_to_float(float_to_bfloat16(src[i])) : half_to_float(float_to_half(src[i]));
}

}  // namespace kerascpp::cpu
