// The two-tap step of SEMANTICS.md §1.3 (detail::lerp) on AVX2 vectors, shared by the linear resample W filter and
// the ROI align x samples. Callers check cpu_has_avx2_f16c() first.
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace rsz::cpu {

// detail::lerp on eight lanes: a + w * (b - a), or a where w is 0.
__attribute__((target("avx2"))) inline __m256 lerp8(__m256 a, __m256 b, __m256 w) {
  const __m256 zero_weight = _mm256_cmp_ps(w, _mm256_setzero_ps(), _CMP_EQ_OQ);
  return _mm256_blendv_ps(_mm256_add_ps(a, _mm256_mul_ps(w, _mm256_sub_ps(b, a))), a, zero_weight);
}

// The first taps src[i0[k]] (in a) and src[i0[k] + 1] (in b) of eight outputs k = 0..7: four pairs of 8-byte loads,
// de-interleaved.
__attribute__((target("avx2"))) inline void load_pairs8(const float* src, const std::int64_t* i0, __m256& a,
                                                         __m256& b) {
  const auto pair = [src](std::int64_t low, std::int64_t high) {
    const __m128 lo = _mm_loadl_pi(_mm_setzero_ps(), reinterpret_cast<const __m64*>(src + low));
    return _mm_loadh_pi(lo, reinterpret_cast<const __m64*>(src + high));
  };
  const __m256 first = _mm256_set_m128(pair(i0[4], i0[5]), pair(i0[0], i0[1]));    // a0 b0 a1 b1 | a4 b4 a5 b5
  const __m256 second = _mm256_set_m128(pair(i0[6], i0[7]), pair(i0[2], i0[3]));   // a2 b2 a3 b3 | a6 b6 a7 b7
  a = _mm256_shuffle_ps(first, second, _MM_SHUFFLE(2, 0, 2, 0));
  b = _mm256_shuffle_ps(first, second, _MM_SHUFFLE(3, 1, 3, 1));
}

// dst[x] = detail::lerp(src[i0[x]], src[i0[x] + 1], w[x]) for x < `end`, eight at a time: the two taps of an output
// are one 8-byte load. Valid where each second tap is i0[x] + 1 or its weight is 0 (the clamped last tap of a linear
// table, or any nearest entry), and src[i0[x] + 1] may be read for every x. Returns how far it got (a multiple of 8).
std::int64_t lerp_pairs_avx2(const float* src, const std::int64_t* i0, const float* w, std::int64_t end, float* dst);

}  // namespace rsz::cpu
