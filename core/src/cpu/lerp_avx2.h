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

// dst[x] = detail::lerp(src[i0[x]], src[i0[x] + 1], w[x]) for x < `end`, eight at a time: the two taps of an output
// are one 8-byte load. Valid where each second tap is i0[x] + 1 or its weight is 0 (the clamped last tap of a linear
// table, or any nearest entry), and src[i0[x] + 1] may be read for every x. Returns how far it got (a multiple of 8).
std::int64_t lerp_pairs_avx2(const float* src, const std::int64_t* i0, const float* w, std::int64_t end, float* dst);

}  // namespace rsz::cpu
