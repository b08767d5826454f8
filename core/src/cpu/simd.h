// The CPU backend's vector kernels, one table per instruction set: every kernel written for a particular ISA is
// reached through a SimdKernels table, and nothing else in the backend tests what the CPU supports. Each operator's
// entry point (resample_cpu, upsample2d_cpu, roi_align_cpu) takes the process's table once, with simd(), and hands
// it down to everything it calls.
//
// The tables (simd_avx2.cpp, simd_baseline.cpp) are built from the same rules: every kernel evaluates exactly the
// expressions of the reference twins in their order, so results are bit-identical whichever table runs (the tests
// run the equivalence suite under both, see RSZ_CPU_BASELINE below).
//
// Three kinds of entries:
// * whole kernels, present in every table (canonicalize_nans, blend_rows, the ROI kernels);
// * prefix kernels (widen_f16, lerp_pairs, ...): they compute the first outputs they can and return how many; the
//   baseline returns 0 and the caller finishes with its scalar loop, which computes the same values;
// * strategies that only pay with vectors (filter_row_doubling, pairs_and_blend, sum_taps, ...): null where the ISA
//   has none, and the caller plans without them.
#pragma once

#include <array>
#include <cstdint>
#include <type_traits>

#include "cpu/roi_tables.h"
#include "cpu/tables.h"

namespace rsz::cpu {

// Where the x86-64 table exists: simd_avx2.cpp is built for x86-64 only (core/CMakeLists.txt), and the baseline table
// uses SSE2 there and plain GCC vector extensions everywhere else (aarch64, ...), with the same results.
#if defined(__x86_64__)
#define RSZ_CPU_X86_64 1
#else
#define RSZ_CPU_X86_64 0
#endif

enum class Isa {
  Baseline,  // GCC vector extensions of 4 lanes (SSE2 on x86-64; NEON or scalar code elsewhere, as the compiler picks)
  Avx2,      // x86-64 only: AVX2 + F16C + FMA (with AVX): 8 lanes, float16 conversions in hardware
};

// ROI_ALIGN channels-last pooling of one ROI over a map of `pixel` channels (8, 16, 24 or 32) of type T.
template <typename T>
using PoolChannelsLast = void (*)(const RoiAxisTable& tx, const RoiAxisTable& ty, const T* map, std::int64_t out_h,
                                  std::int64_t out_w, float oob, float count, float* res);

// The ROI_ALIGN channels-last kernels for maps of T elements (float32, or float16 bits).
template <typename T>
struct MapKernels {
  // Pooling of one ROI: [average][pixel / 8 - 1] (max or average, maps of 8, 16, 24 or 32 channels).
  std::array<std::array<PoolChannelsLast<T>, 4>, 2> pool;
  // dst[j * dst_stride + i] = src[i * src_stride + j] for i < rows, j < cols.
  void (*transpose)(const T* src, std::int64_t src_stride, std::int64_t rows, std::int64_t cols, T* dst,
                    std::int64_t dst_stride);
};

struct SimdKernels {
  Isa isa;
  const char* name;  // for rsz::backends(): "AVX2 + F16C + FMA", "baseline x86-64"

  // ---- rows (rows.h) ----
  // dst[i] = float16 bits src[i] widened, for a prefix of [0, count); returns its length.
  std::int64_t (*widen_f16)(const std::uint16_t* src, std::int64_t count, float* dst);
  // dst[i] = src[i * stride] / 255 (detail::unorm_to_float of an 8-bit sample: p / 255 in double rounded once,
  // which the float32 quotient p / 255.0f equals for every p), for a prefix of [0, count); returns its length. Reads
  // no byte past src[(count - 1) * stride].
  std::int64_t (*widen_u8)(const std::uint8_t* src, std::int64_t stride, std::int64_t count, float* dst);
  // dst[i] = src[i] rounded to float16 bits (nearest even), for a prefix; returns its length.
  std::int64_t (*narrow_f16)(const float* src, std::int64_t count, std::uint16_t* dst);
  // Every NaN in row[0, count) becomes detail::canonical_nan.
  void (*canonicalize_nans)(float* row, std::int64_t count);
  // dst[x] = detail::lerp(src[i0[x]], src[i0[x] + 1], w[x]) for a prefix of [0, end): the two taps of an output are
  // one 8-byte load. Valid where each second tap is i0[x] + 1 or its weight is 0, and src[i0[x] + 1] may be read.
  std::int64_t (*lerp_pairs)(const float* src, const std::int64_t* i0, const float* w, std::int64_t end, float* dst);

  // ---- RESAMPLE1 linear (resample_cpu.cpp) ----
  // lerp_pairs where moreover i0[x] = i0[0] + 2 x (halving): contiguous values hold the outputs' taps.
  std::int64_t (*filter_row_halving)(const float* src, const std::int64_t* i0, const float* w, std::int64_t end,
                                     float* dst);
  // Outputs [run.begin, run.end) of a doubling W table (tables.h, DoublingRun). Null: none.
  void (*filter_row_doubling)(const float* src, const DoublingRun& run, float* dst);
  // Halving along W on rows r0 and r1 (taps from first_tap) and blending them along H with weight wy in one pass, a
  // NaN stored as the canonical one, for a prefix of [0, end) (`ahead`: prefetch distance, 0 for none); returns its
  // length. Null: none.
  std::int64_t (*halve_and_blend)(const float* r0, const float* r1, std::int64_t first_tap, const float* w, float wy,
                                  std::int64_t end, std::int64_t ahead, float* dst);
  // The same for tables whose taps are adjacent (lerp_pairs' condition). Null: none.
  std::int64_t (*pairs_and_blend)(const float* r0, const float* r1, const std::int64_t* i0, const float* w, float wy,
                                  std::int64_t end, float* dst);
  // dst[x] = a[x] + w * (b[x] - a[x]), a NaN stored as the canonical one; dst may be a.
  void (*blend_rows)(float* dst, const float* a, const float* b, float w, std::int64_t count);
  // blend_rows narrowed to float16 bits in the same pass, streamed past the caches with `stream`. Null: none.
  void (*blend_rows_f16)(std::uint16_t* dst, const float* a, const float* b, float w, std::int64_t count, bool stream);
  // blend_rows streamed past the caches. Null: none.
  void (*blend_rows_stream)(float* dst, const float* a, const float* b, float w, std::int64_t count);

  // ---- RESAMPLE1 antialiased (resample_antialias_cpu.cpp) ----
  // The weighted sums of TapTable t for a prefix of [0, out), reading `wt` (the weights transposed: wt[k * out + x],
  // 0 past a count); rows shorter than 2^31. Null: none.
  std::int64_t (*sum_taps)(const float* src, const TapTable& t, const float* wt, std::int64_t out, float* dst);

  // ---- ROI_ALIGN (roi_align_cpu.cpp, roi_align_kernels.h) ----
  // Whether the channels-last path gathers float16 maps as float16 bits (widened per tap, cheap in hardware).
  bool f16_maps;
  MapKernels<float> map_f32;
  MapKernels<std::uint16_t> map_f16;
  // One y sample of the plane path over the output columns: the x-lerped rows top and bottom blended with wy (top
  // alone where wy is 0), `oob` where inside_x says an x sample is outside (null: all inside), folded as `fold` says.
  void (*accumulate_y_sample)(const float* top, const float* bottom, float wy, const unsigned char* inside_x,
                              std::uint32_t sx, std::int64_t out_w, float oob, const PlaneFold& fold);
  // A y sample outside the map: `oob` for every sample of the row.
  void (*accumulate_outside)(std::uint32_t sx, std::int64_t out_w, float oob, const PlaneFold& fold);

  // map_f32 or map_f16, for maps of T.
  template <typename T>
  const MapKernels<T>& map() const {
    if constexpr (std::is_same_v<T, float>) {
      return map_f32;
    } else {
      return map_f16;
    }
  }
};

// Constant-initialized (constexpr where defined): usable from any static initializer. Each table is filled field by
// field by name (a constexpr function), so two entries of the same signature cannot be swapped unnoticed.
extern const SimdKernels kBaselineKernels;  // simd_baseline.cpp
#if RSZ_CPU_X86_64
extern const SimdKernels kAvx2Kernels;  // simd_avx2.cpp
#endif

// The table of this process, chosen once: AVX2 + F16C + FMA where the CPU has them (x86-64), unless the environment
// variable RSZ_CPU_BASELINE is set to something other than "" or "0" (the tests use it to run the baseline kernels on
// any machine). Results never depend on it.
const SimdKernels& simd();

}  // namespace rsz::cpu
