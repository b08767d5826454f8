// The AVX2 + F16C + FMA table of the CPU backend's vector kernels (simd.h). Everything after the target pragma is
// compiled for AVX2 + F16C + FMA and has internal linkage (namespace avx2, unnamed): the headers it uses are included
// before the pragma, so that no function shared with the rest of the program is compiled for this ISA. (The clang fuzz
// build, where the pragma does nothing, compiles this whole file with -mavx2 -mf16c -mfma instead: see
// CMakeLists.txt.)
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "cpu/roi_tables.h"
#include "cpu/simd.h"
#include "cpu/tables.h"
#include "detail/access.h"
#include "detail/coords.h"
#include "rsz/float16.h"

#pragma GCC target("avx2,f16c,fma")

namespace rsz::cpu::avx2 {
namespace {

// detail::lerp on eight lanes: a + w * (b - a), or a where w is 0.
inline __m256 lerp8(__m256 a, __m256 b, __m256 w) {
  const __m256 zero_weight = _mm256_cmp_ps(w, _mm256_setzero_ps(), _CMP_EQ_OQ);
  return _mm256_blendv_ps(_mm256_add_ps(a, _mm256_mul_ps(w, _mm256_sub_ps(b, a))), a, zero_weight);
}

// The first taps src[i0[k]] (in a) and src[i0[k] + 1] (in b) of eight outputs k = 0..7: four pairs of 8-byte loads,
// de-interleaved.
inline void load_pairs8(const float* src, const std::int64_t* i0, __m256& a, __m256& b) {
  const auto pair = [src](std::int64_t low, std::int64_t high) {
    const __m128 lo = _mm_loadl_pi(_mm_setzero_ps(), reinterpret_cast<const __m64*>(src + low));
    return _mm_loadh_pi(lo, reinterpret_cast<const __m64*>(src + high));
  };
  const __m256 first = _mm256_set_m128(pair(i0[4], i0[5]), pair(i0[0], i0[1]));   // a0 b0 a1 b1 | a4 b4 a5 b5
  const __m256 second = _mm256_set_m128(pair(i0[6], i0[7]), pair(i0[2], i0[3]));  // a2 b2 a3 b3 | a6 b6 a7 b7
  a = _mm256_shuffle_ps(first, second, _MM_SHUFFLE(2, 0, 2, 0));
  b = _mm256_shuffle_ps(first, second, _MM_SHUFFLE(3, 1, 3, 1));
}

std::int64_t widen_f16(const std::uint16_t* src, std::int64_t count, float* dst) {
  std::int64_t i = 0;
  for (; i + 8 <= count; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(h));
  }
  return i;
}

// p / 255 on eight lanes, the value detail::unorm_to_float gives for every p in 0..255: the product with 1/255,
// corrected by one FMA step (the tests check all 256 values). A division costs more than the loads around it.
inline __m256 unorm8_value8(__m256i p) {
  const __m256 v = _mm256_cvtepi32_ps(p);
  const __m256 inverse = _mm256_set1_ps(1.0f / 255.0f);
  const __m256 q = _mm256_mul_ps(v, inverse);
  return _mm256_fmadd_ps(_mm256_fnmadd_ps(q, _mm256_set1_ps(255.0f), v), inverse, q);
}

// Eight samples src[0], src[stride], ..., src[7 * stride] of an interleaved row, as 32-bit lanes. Strides 1 to 4 (gray,
// gray + alpha, RGB, RGBA) are picked out of one or two plain loads that read up to stride - 1 bytes past the eighth
// sample; other strides gather 4-byte words (3 bytes past it). Gathers are slow on many CPUs.
template <int Stride>
inline __m256i unorm8_samples8(const std::uint8_t* src) {
  if constexpr (Stride == 1) {
    return _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(src)));
  } else if constexpr (Stride == 2) {
    const __m128i pick = _mm_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, -1, -1, -1, -1, -1, -1, -1, -1);
    return _mm256_cvtepu8_epi32(_mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src)), pick));
  } else if constexpr (Stride == 3) {
    const __m128i first = _mm_setr_epi8(0, 3, 6, 9, 12, 15, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
    const __m128i second = _mm_setr_epi8(-1, -1, -1, -1, -1, -1, 10, 13, -1, -1, -1, -1, -1, -1, -1, -1);
    const __m128i a = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src)), first);
    const __m128i b = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 8)), second);
    return _mm256_cvtepu8_epi32(_mm_or_si128(a, b));
  } else {
    static_assert(Stride == 4);
    return _mm256_and_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src)), _mm256_set1_epi32(0xff));
  }
}

template <int Stride>
std::int64_t widen_u8_fixed(const std::uint8_t* src, std::int64_t count, float* dst) {
  // The last load of a step ends at byte (i + 8) * Stride - 1, which must stay within the row's last sample.
  const std::int64_t last = (count - 1) * Stride;
  std::int64_t i = 0;
  for (; i + 8 <= count && (i + 8) * Stride - 1 <= last; i += 8) {
    _mm256_storeu_ps(dst + i, unorm8_value8(unorm8_samples8<Stride>(src + i * Stride)));
  }
  return i;
}

std::int64_t widen_u8(const std::uint8_t* src, std::int64_t stride, std::int64_t count, float* dst) {
  switch (stride) {
    case 1: return widen_u8_fixed<1>(src, count, dst);
    case 2: return widen_u8_fixed<2>(src, count, dst);
    case 3: return widen_u8_fixed<3>(src, count, dst);
    case 4: return widen_u8_fixed<4>(src, count, dst);
    default: break;
  }
  if (stride < 2 || stride > (std::int64_t{1} << 26)) return 0;  // the offsets below are int32
  // Eight 4-byte loads at src + (i + k) * stride, low byte kept: the last one reads 3 bytes past its sample, so the
  // loop stops where that stays within the row.
  const __m256i offsets = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
                                             _mm256_set1_epi32(static_cast<int>(stride)));
  const __m256i low = _mm256_set1_epi32(0xff);
  const std::int64_t last = (count - 1) * stride;  // the last byte that may be read
  std::int64_t i = 0;
  for (; i + 8 <= count && (i + 7) * stride + 3 <= last; i += 8) {
    const __m256i words = _mm256_i32gather_epi32(reinterpret_cast<const int*>(src + i * stride), offsets, 1);
    _mm256_storeu_ps(dst + i, unorm8_value8(_mm256_and_si256(words, low)));
  }
  return i;
}

std::int64_t narrow_f16(const float* src, std::int64_t count, std::uint16_t* dst) {
  std::int64_t i = 0;
  for (; i + 8 <= count; i += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), h);
  }
  return i;
}

std::int64_t lerp_pairs(const float* src, const std::int64_t* i0, const float* w, std::int64_t end, float* dst) {
  std::int64_t x = 0;
  for (; x + 8 <= end; x += 8) {
    __m256 a;
    __m256 b;
    load_pairs8(src, i0 + x, a, b);
    _mm256_storeu_ps(dst + x, lerp8(a, b, _mm256_loadu_ps(w + x)));
  }
  return x;
}

// detail::canonical_nan on eight lanes: a NaN lane becomes float32 0x7fc00000 (SEMANTICS.md §0, computed results).
inline __m256 canonical_nan8(__m256 v) {
  return _mm256_blendv_ps(v, _mm256_castsi256_ps(_mm256_set1_epi32(0x7fc00000)), _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
}

// Eight outputs of a halving W filter from the sixteen values at p (a0 b0 a1 b1 ... a7 b7): lerp8(a, b, wx).
inline __m256 halving_lerp(const float* p, __m256 wx) {
  const __m256 v0 = _mm256_loadu_ps(p);      // a0 b0 a1 b1 | a2 b2 a3 b3
  const __m256 v1 = _mm256_loadu_ps(p + 8);  // a4 b4 a5 b5 | a6 b6 a7 b7
  // Per 128-bit lane: a0 a1 a4 a5 | a2 a3 a6 a7, then the 64-bit quarters put back in order.
  const __m256 a = _mm256_castpd_ps(_mm256_permute4x64_pd(
      _mm256_castps_pd(_mm256_shuffle_ps(v0, v1, _MM_SHUFFLE(2, 0, 2, 0))), _MM_SHUFFLE(3, 1, 2, 0)));
  const __m256 b = _mm256_castpd_ps(_mm256_permute4x64_pd(
      _mm256_castps_pd(_mm256_shuffle_ps(v0, v1, _MM_SHUFFLE(3, 1, 3, 1))), _MM_SHUFFLE(3, 1, 2, 0)));
  return lerp8(a, b, wx);
}

// lerp_pairs where moreover i0[x] = i0[0] + 2 x (halving): sixteen contiguous values hold eight outputs' taps.
std::int64_t filter_row_halving(const float* src, const std::int64_t* i0, const float* w, std::int64_t end,
                                float* dst) {
  const float* base = src + (end > 0 ? i0[0] : 0);
  std::int64_t x = 0;
  for (; x + 8 <= end; x += 8) {
    _mm256_storeu_ps(dst + x, halving_lerp(base + 2 * x, _mm256_loadu_ps(w + x)));
  }
  return x;
}

// Halving along W and blending two such rows along H in one pass: dst[x] = t + wy * (u - t) with t and u the
// W-lerps of rows r0 and r1 (computed exactly as filter_row_halving does), a NaN stored as the canonical NaN
// (these are final results). Returns how far it got.
std::int64_t halve_and_blend(const float* r0, const float* r1, std::int64_t first_tap, const float* w, float wy,
                             std::int64_t end, std::int64_t ahead, float* dst) {
  const __m256 wyv = _mm256_set1_ps(wy);
  std::int64_t x = 0;
  for (; x + 8 <= end; x += 8) {
    if (ahead != 0) {
      _mm_prefetch(reinterpret_cast<const char*>(r0 + ahead + first_tap + 2 * x), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(r1 + ahead + first_tap + 2 * x), _MM_HINT_T0);
    }
    const __m256 wx = _mm256_loadu_ps(w + x);
    const __m256 t = halving_lerp(r0 + first_tap + 2 * x, wx);
    const __m256 u = halving_lerp(r1 + first_tap + 2 * x, wx);
    _mm256_storeu_ps(dst + x, canonical_nan8(_mm256_add_ps(t, _mm256_mul_ps(wyv, _mm256_sub_ps(u, t)))));
  }
  return x;
}

// The same for any table whose first `end` outputs have adjacent taps: both rows' taps loaded in pairs in one pass,
// so that the two rows are read side by side.
std::int64_t pairs_and_blend(const float* r0, const float* r1, const std::int64_t* i0, const float* w, float wy,
                             std::int64_t end, float* dst) {
  const __m256 wyv = _mm256_set1_ps(wy);
  std::int64_t x = 0;
  for (; x + 8 <= end; x += 8) {
    const __m256 wx = _mm256_loadu_ps(w + x);
    __m256 a;
    __m256 b;
    load_pairs8(r0, i0 + x, a, b);
    const __m256 t = lerp8(a, b, wx);
    load_pairs8(r1, i0 + x, a, b);
    const __m256 u = lerp8(a, b, wx);
    _mm256_storeu_ps(dst + x, canonical_nan8(_mm256_add_ps(t, _mm256_mul_ps(wyv, _mm256_sub_ps(u, t)))));
  }
  return x;
}

// The doubling run, 16 outputs at a time: the even and the odd outputs are each one lerp of two 8-value loads, then
// interleaved.
void filter_row_doubling(const float* src, const DoublingRun& run, float* dst) {
  const __m256 w0 = _mm256_set1_ps(run.w[0]);
  const __m256 w1 = _mm256_set1_ps(run.w[1]);
  for (std::int64_t o = run.begin; o < run.end; o += 16) {
    const float* p0 = src + o / 2 + run.d[0];
    const float* p1 = src + o / 2 + run.d[1];
    const __m256 even = lerp8(_mm256_loadu_ps(p0), _mm256_loadu_ps(p0 + 1), w0);  // outputs o, o + 2, ...
    const __m256 odd = lerp8(_mm256_loadu_ps(p1), _mm256_loadu_ps(p1 + 1), w1);   // outputs o + 1, o + 3, ...
    const __m256 lo = _mm256_unpacklo_ps(even, odd);                              // o .. o+3 | o+8 .. o+11
    const __m256 hi = _mm256_unpackhi_ps(even, odd);                              // o+4 .. o+7 | o+12 .. o+15
    _mm256_storeu_ps(dst + o, _mm256_permute2f128_ps(lo, hi, 0x20));
    _mm256_storeu_ps(dst + o + 8, _mm256_permute2f128_ps(lo, hi, 0x31));
  }
}

// dst[x] = float16 of (a[x] + w * (b[x] - a[x])): blend_rows and the narrowing of store_row in one pass, eight
// outputs at a time, streamed past the caches with `stream` (after plain stores up to a 16-byte boundary).
void blend_rows_f16(std::uint16_t* dst, const float* a, const float* b, float w, std::int64_t count, bool stream) {
  const auto one = [&](std::int64_t i) {
    dst[i] = float_to_float16_bits(detail::canonical_nan(a[i] + w * (b[i] - a[i])));
  };
  std::int64_t x = 0;
  if (stream) {
    for (; x < count && reinterpret_cast<std::uintptr_t>(dst + x) % 16 != 0; ++x) one(x);
  }
  const __m256 wv = _mm256_set1_ps(w);
  for (; x + 8 <= count; x += 8) {
    const __m256 av = _mm256_loadu_ps(a + x);
    const __m256 v = canonical_nan8(_mm256_add_ps(av, _mm256_mul_ps(wv, _mm256_sub_ps(_mm256_loadu_ps(b + x), av))));
    const __m128i h = _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    if (stream) {
      _mm_stream_si128(reinterpret_cast<__m128i*>(dst + x), h);
    } else {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + x), h);
    }
  }
  for (; x < count; ++x) one(x);
}

// blend_rows streamed past the caches: plain stores up to a 32-byte boundary, then eight outputs per streaming
// store.
void blend_rows_stream(float* dst, const float* a, const float* b, float w, std::int64_t count) {
  std::int64_t x = 0;
  const auto one = [&](std::int64_t i) { dst[i] = detail::canonical_nan(a[i] + w * (b[i] - a[i])); };
  for (; x < count && reinterpret_cast<std::uintptr_t>(dst + x) % 32 != 0; ++x) one(x);
  const __m256 wv = _mm256_set1_ps(w);
  for (; x + 8 <= count; x += 8) {
    const __m256 av = _mm256_loadu_ps(a + x);
    _mm256_stream_ps(dst + x,
                     canonical_nan8(_mm256_add_ps(av, _mm256_mul_ps(wv, _mm256_sub_ps(_mm256_loadu_ps(b + x), av)))));
  }
  for (; x < count; ++x) one(x);
}

// Rows r[0..7] of an 8 x 8 block become its columns: r[j][l] = old r[l][j].
inline void transpose8(__m256 (&r)[8]) {
  const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]);
  const __m256 t1 = _mm256_unpackhi_ps(r[0], r[1]);
  const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]);
  const __m256 t3 = _mm256_unpackhi_ps(r[2], r[3]);
  const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]);
  const __m256 t5 = _mm256_unpackhi_ps(r[4], r[5]);
  const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]);
  const __m256 t7 = _mm256_unpackhi_ps(r[6], r[7]);
  const __m256 u0 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(1, 0, 1, 0));
  const __m256 u1 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(3, 2, 3, 2));
  const __m256 u2 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(1, 0, 1, 0));
  const __m256 u3 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(3, 2, 3, 2));
  const __m256 u4 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(1, 0, 1, 0));
  const __m256 u5 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(3, 2, 3, 2));
  const __m256 u6 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(1, 0, 1, 0));
  const __m256 u7 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(3, 2, 3, 2));
  r[0] = _mm256_permute2f128_ps(u0, u4, 0x20);
  r[1] = _mm256_permute2f128_ps(u1, u5, 0x20);
  r[2] = _mm256_permute2f128_ps(u2, u6, 0x20);
  r[3] = _mm256_permute2f128_ps(u3, u7, 0x20);
  r[4] = _mm256_permute2f128_ps(u0, u4, 0x31);
  r[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
  r[6] = _mm256_permute2f128_ps(u2, u6, 0x31);
  r[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
}

// sum_taps eight outputs at a time, each lane adding its taps in order (lanes past their count keep their sum).
// Where every lane's taps, rounded up to whole vectors, lie within the input row (TapTable::in_size), each lane's
// next eight taps are one plain load and the eight loads are transposed into eight taps of all lanes; elsewhere tap k
// of the eight lanes is one gather (slow on many CPUs). Needs input rows shorter than 2^31 and `wt` = the weights
// transposed (wt[k * out + x], 0 past a count).
std::int64_t sum_taps(const float* src, const TapTable& t, const float* wt, std::int64_t out, float* dst) {
  std::int64_t x = 0;
  for (; x + 8 <= out; x += 8) {
    alignas(32) std::int32_t first[8];
    alignas(32) std::int32_t count[8];
    std::int32_t most = 1;
    for (int l = 0; l < 8; ++l) {
      const auto i = static_cast<std::size_t>(x + l);
      first[l] = static_cast<std::int32_t>(t.first[i]);
      count[l] = t.count[i];
      most = std::max(most, count[l]);
    }
    const __m256i counts = _mm256_load_si256(reinterpret_cast<const __m256i*>(count));
    const std::int64_t span = (static_cast<std::int64_t>(most) + 7) / 8 * 8;
    bool loads = true;
    for (int l = 0; l < 8; ++l) loads = loads && first[l] + span <= t.in_size;
    if (loads) {
      __m256 acc = _mm256_setzero_ps();
      for (std::int32_t k0 = 0; k0 < most; k0 += 8) {
        __m256 taps[8];
        for (int l = 0; l < 8; ++l) taps[l] = _mm256_loadu_ps(src + first[l] + k0);
        transpose8(taps);
        for (std::int32_t j = 0; j < 8 && k0 + j < most; ++j) {
          const std::int32_t k = k0 + j;
          const __m256 product = _mm256_mul_ps(_mm256_loadu_ps(wt + k * out + x), taps[j]);
          if (k == 0) {
            acc = product;  // every lane has a first tap
            continue;
          }
          const __m256 live = _mm256_castsi256_ps(_mm256_cmpgt_epi32(counts, _mm256_set1_epi32(k)));
          acc = _mm256_blendv_ps(acc, _mm256_add_ps(acc, product), live);
        }
      }
      _mm256_storeu_ps(dst + x, acc);
      continue;
    }
    const __m256i base = _mm256_load_si256(reinterpret_cast<const __m256i*>(first));
    __m256 acc = _mm256_mul_ps(_mm256_loadu_ps(wt + x), _mm256_i32gather_ps(src, base, 4));
    for (std::int32_t k = 1; k < most; ++k) {
      const __m256i kv = _mm256_set1_epi32(k);
      const __m256 live = _mm256_castsi256_ps(_mm256_cmpgt_epi32(counts, kv));
      const __m256 v = _mm256_mask_i32gather_ps(_mm256_setzero_ps(), src, _mm256_add_epi32(base, kv), live, 4);
      const __m256 next = _mm256_add_ps(acc, _mm256_mul_ps(_mm256_loadu_ps(wt + k * out + x), v));
      acc = _mm256_blendv_ps(acc, next, live);
    }
    _mm256_storeu_ps(dst + x, acc);
  }
  return x;
}

#define RSZ_SIMD_LANES 8
#include "cpu/roi_align_kernels.h"
#include "cpu/row_kernels.h"
#undef RSZ_SIMD_LANES

}  // namespace
}  // namespace rsz::cpu::avx2

namespace rsz::cpu {

namespace {

// Named fields (simd.h): every kernel this ISA has.
constexpr SimdKernels avx2_kernels() {
  SimdKernels k{};
  k.isa = Isa::Avx2;
  k.name = "AVX2 + F16C + FMA";
  k.widen_f16 = avx2::widen_f16;
  k.widen_u8 = avx2::widen_u8;
  k.narrow_f16 = avx2::narrow_f16;
  k.canonicalize_nans = avx2::canonicalize_nans;
  k.lerp_pairs = avx2::lerp_pairs;
  k.filter_row_halving = avx2::filter_row_halving;
  k.filter_row_doubling = avx2::filter_row_doubling;
  k.halve_and_blend = avx2::halve_and_blend;
  k.pairs_and_blend = avx2::pairs_and_blend;
  k.blend_rows = avx2::blend_rows;
  k.blend_rows_f16 = avx2::blend_rows_f16;
  k.blend_rows_stream = avx2::blend_rows_stream;
  k.sum_taps = avx2::sum_taps;
  k.f16_maps = true;
  k.map_f32 = avx2::map_kernels<float>();
  k.map_f16 = avx2::map_kernels<std::uint16_t>();
  k.accumulate_y_sample = avx2::accumulate_y_sample;
  k.accumulate_outside = avx2::accumulate_outside;
  return k;
}

}  // namespace

constexpr SimdKernels kAvx2Kernels = avx2_kernels();

}  // namespace rsz::cpu
