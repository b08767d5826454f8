// THE coordinate formulas of SEMANTICS.md, one small function each, shared by every backend.
// This file is compiled with -ffp-contract=off: every expression is evaluated exactly as written, in float32.
#pragma once

#include <math.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "rsz/resample.h"

// Host and device: the CUDA backend evaluates the same functions (compiled with -fmad=false, so no contraction).
#ifdef __CUDACC__
#define RSZ_HD __host__ __device__
#else
#define RSZ_HD
#endif

namespace rsz::detail {

// Index: the integer type of the indices below, 64 bits; a kernel that knows its axes have at most 2^24 elements may
// take 32 (the same values, fewer instructions). Given explicitly, never deduced: Same keeps an argument from
// deducing it.
template <typename T>
struct Same {
  using type = T;
};

// RESAMPLE1 §1.1: the source coordinate of output index o on one axis.
template <typename Index = std::int64_t>
RSZ_HD inline float resample_source_coord(typename Same<Index>::type o, float scale, float input_offset,
                                          float output_offset) {
  return (static_cast<float>(o) - output_offset) / scale - input_offset;
}

// §1.2 (and ROI nearest): floor(x + 0.5) clamped to [0, n - 1]; exact halves go up. Clamped in float before the
// conversion: NaN and -Inf give 0, +Inf gives n - 1.
RSZ_HD inline std::int64_t nearest_index(float x, std::int64_t n) {
  const float rounded = floorf(x + 0.5f);
  if (!(rounded > 0.0f)) return 0;
  if (rounded >= static_cast<float>(n - 1)) return n - 1;
  return static_cast<std::int64_t>(rounded);
}

// §1.2 with RESAMPLE2's rounding direction: RoundPreferCeil floor(x + 0.5), RoundPreferFloor ceil(x - 0.5),
// Floor floor(x), Ceil ceil(x), each in float32, then clamped exactly as nearest_index.
RSZ_HD inline std::int64_t nearest_index(float x, std::int64_t n, NearestRounding rounding) {
  float rounded;
  switch (rounding) {
    case NearestRounding::RoundPreferFloor: rounded = ceilf(x - 0.5f); break;
    case NearestRounding::Floor: rounded = floorf(x); break;
    case NearestRounding::Ceil: rounded = ceilf(x); break;
    case NearestRounding::RoundPreferCeil:
    default: rounded = floorf(x + 0.5f); break;
  }
  if (!(rounded > 0.0f)) return 0;
  if (rounded >= static_cast<float>(n - 1)) return n - 1;
  return static_cast<std::int64_t>(rounded);
}

// §1.3: the two taps and the weight of the second one, with x clamped to [0, n - 1].
template <typename Index>
struct LinearTapsOf {
  Index i0;
  Index i1;
  float w;
};
using LinearTaps = LinearTapsOf<std::int64_t>;

// Clamps to [0, n - 1]; NaN becomes 0 (no NaN or infinity survives, so the result converts safely to an index).
// -0 stays -0 (it reads index 0 like +0).
template <typename Index = std::int64_t>
RSZ_HD inline float clamp_coord(float x, typename Same<Index>::type n) {
  const float hi = static_cast<float>(n - 1);
  return x > hi ? hi : (x >= 0.0f ? x : 0.0f);
}

template <typename Index = std::int64_t>
RSZ_HD inline LinearTapsOf<Index> linear_taps(float x, typename Same<Index>::type n) {
  const float clamped = clamp_coord<Index>(x, n);  // finite and in [0, n - 1]: the conversion below is defined
  Index i0 = static_cast<Index>(floorf(clamped));
  if (i0 > n - 1) i0 = n - 1;
  const Index i1 = i0 + 1 < n ? i0 + 1 : n - 1;
  return {i0, i1, clamped - static_cast<float>(i0)};
}

// §1.3: one 2-tap step. A zero weight takes only the first tap (so an infinite or huge second tap cannot leak in).
// lerp where w is known not to be 0.
RSZ_HD inline float lerp_weighted(float a, float b, float w) { return a + w * (b - a); }
RSZ_HD inline float lerp(float a, float b, float w) { return w == 0.0f ? a : lerp_weighted(a, b, w); }

// §1.7 in pieces that host and device share. The candidate range of an antialiased axis (linear, scale < 1) for
// source coordinate x: xc = clamp_coord(x, n), and indices [lo, hi], one wider than the support 1 / scale on each
// side (float rounding), clamped in float before the conversion (the support may be huge or infinite).
struct AntialiasRange {
  float xc;
  std::int64_t lo;
  std::int64_t hi;
};

RSZ_HD inline AntialiasRange antialias_range(float x, std::int64_t n, float scale) {
  const float xc = clamp_coord(x, n);
  const float support = 1.0f / scale;
  const float hi_index = static_cast<float>(n - 1);
  const float lo_f = floorf(xc - support) - 1.0f;
  const float hi_f = ceilf(xc + support) + 1.0f;
  return {xc, lo_f > 0.0f ? static_cast<std::int64_t>(lo_f) : 0,
          hi_f < hi_index ? static_cast<std::int64_t>(hi_f) : n - 1};
}

// The unnormalized weight of input index i: 1 - |(i - xc) * scale|; a tap only where it is > 0.
RSZ_HD inline float antialias_weight(std::int64_t i, float xc, float scale) {
  return 1.0f - fabsf((static_cast<float>(i) - xc) * scale);
}

// The taps of antialias_range `r`: the indices first..last of [r.lo, r.hi] whose antialias_weight is > 0 (at least
// the one nearest xc; they are contiguous, as |i - xc| grows monotonically) and the sum of their weights in index
// order. first < 0 where there is none: not reachable (the index floor(xc) always has w > 0), and every user then takes
// floor(xc) with weight 1 as a guard.
struct AntialiasSpan {
  std::int64_t first;
  std::int64_t last;
  float total;
};
RSZ_HD inline AntialiasSpan antialias_span(const AntialiasRange& r, float scale) {
  AntialiasSpan s{-1, r.hi, 0.0f};
  for (std::int64_t i = r.lo; i <= r.hi; ++i) {
    const float w = antialias_weight(i, r.xc, scale);
    if (!(w > 0.0f)) {
      if (s.first >= 0) {  // past the taps
        s.last = i - 1;
        break;
      }
      continue;
    }
    if (s.first < 0) s.first = i;
    s.total = s.total + w;
  }
  return s;
}

// §1.7: the taps of an antialiased axis for source coordinate x: `weights` receives the normalized weights of input
// indices first, first + 1, ...; returns first. The taps are antialias_span's, each normalized as
// w_i / (w_first + w_first+1 + ...), summed in index order.
inline std::int64_t antialias_taps(float x, std::int64_t n, float scale, std::vector<float>& weights) {
  const AntialiasRange r = antialias_range(x, n, scale);
  const AntialiasSpan s = antialias_span(r, scale);
  weights.clear();
  if (s.first < 0) {  // the guard
    weights.assign(1, 1.0f);
    return static_cast<std::int64_t>(floorf(r.xc));
  }
  for (std::int64_t i = s.first; i <= s.last; ++i) weights.push_back(antialias_weight(i, r.xc, scale) / s.total);
  return s.first;
}

// One step of an antialiased axis' weighted sum: acc + w * v (the first tap is w * v alone).
RSZ_HD inline float weighted_tap(float acc, float w, float v) { return acc + w * v; }

// a x b, or UINT64_MAX where the product overflows: sample and table counts that must not wrap.
RSZ_HD inline std::uint64_t saturating_mul(std::uint64_t a, std::uint64_t b) {
#ifdef __CUDA_ARCH__
  return __umul64hi(a, b) != 0 ? UINT64_MAX : a * b;
#else
  std::uint64_t r = 0;
  return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
#endif
}

// §3.2: samples per output element on one axis: clamp(ceil(|extent| / out_size), lo, hi).
RSZ_HD inline std::uint32_t roi_sample_count(float extent, std::int64_t out_size, std::uint32_t lo,
                                             std::uint32_t hi) {
  const float wanted = ceilf(fabsf(extent) / static_cast<float>(out_size));
  // `!(wanted < hi)` also maps NaN to hi, so no NaN reaches the integer conversion.
  const std::uint32_t count = !(wanted < static_cast<float>(hi)) ? hi : static_cast<std::uint32_t>(wanted);
  return count < lo ? lo : count;
}

// §3.3 evaluated with the integer type Wide, wide enough for out_size * samples.
template <typename Wide>
RSZ_HD inline float roi_sample_coord_as(float start, float extent, std::int64_t out_size, std::uint32_t samples,
                                        std::int64_t o, std::uint32_t k, float input_offset, float output_offset,
                                        bool align_to_corners) {
  const Wide index = static_cast<Wide>(o) * samples + k;
  const Wide total = static_cast<Wide>(out_size) * samples;
  if (align_to_corners) {
    const float step = total > 1 ? extent / static_cast<float>(total - 1) : 0.0f;
    return start + static_cast<float>(index) * step - input_offset;
  }
  const float step = extent / static_cast<float>(total);
  return start + (static_cast<float>(index) - output_offset) * step - input_offset;
}

// §3.3: position of sample k of output index o on one axis (start = X1, extent = RW, both already scaled).
// Integer products are exact and rounded to float32 once: in 64 bits where they fit (the same integers, so the same
// floats), in 128 bits otherwise.
RSZ_HD inline float roi_sample_coord(float start, float extent, std::int64_t out_size, std::uint32_t samples,
                                     std::int64_t o, std::uint32_t k, float input_offset, float output_offset,
                                     bool align_to_corners) {
  constexpr std::int64_t kFits = std::int64_t{1} << 31;  // (2^31 - 1) * (2^32 - 1) + k < 2^64
  if (out_size < kFits && o < kFits) {
    return roi_sample_coord_as<std::uint64_t>(start, extent, out_size, samples, o, k, input_offset, output_offset,
                                              align_to_corners);
  }
  __extension__ typedef unsigned __int128 Wide;
  return roi_sample_coord_as<Wide>(start, extent, out_size, samples, o, k, input_offset, output_offset,
                                   align_to_corners);
}

// §3.4: a sample outside [-1, n] on either axis reads out_of_bounds_input_value.
RSZ_HD inline bool roi_sample_in_bounds(float x, float y, std::int64_t width, std::int64_t height) {
  return !(x < -1.0f || x > static_cast<float>(width) || y < -1.0f || y > static_cast<float>(height));
}

}  // namespace rsz::detail
