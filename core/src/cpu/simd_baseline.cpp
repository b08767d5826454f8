// The baseline table of the CPU backend's vector kernels (simd.h), on every architecture: the kernels written once
// with GCC vector extensions, at 4 lanes (SSE2 on x86-64, whatever the compiler makes of them elsewhere: NEON on
// aarch64); no prefix kernels (they compute nothing and the callers' scalar loops do it all) and none of the
// strategies that only pay with AVX2.
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "cpu/roi_tables.h"
#include "cpu/simd.h"
#include "detail/access.h"
#include "detail/coords.h"
#include "rsz/float16.h"

namespace rsz::cpu::baseline {
namespace {

std::int64_t widen_f16(const std::uint16_t*, std::int64_t, float*) { return 0; }
std::int64_t narrow_f16(const float*, std::int64_t, std::uint16_t*) { return 0; }
std::int64_t widen_u8(const std::uint8_t*, std::int64_t, std::int64_t, float*) { return 0; }
std::int64_t lerp_pairs(const float*, const std::int64_t*, const float*, std::int64_t, float*) { return 0; }

#define RSZ_SIMD_LANES 4
#include "cpu/roi_align_kernels.h"
#include "cpu/row_kernels.h"
#undef RSZ_SIMD_LANES

}  // namespace
}  // namespace rsz::cpu::baseline

namespace rsz::cpu {

namespace {

// Named fields; the strategies that only pay with wider vectors stay null (the callers plan without them).
constexpr SimdKernels baseline_kernels() {
  SimdKernels k{};
  k.isa = Isa::Baseline;
  k.name = RSZ_CPU_X86_64 ? "baseline x86-64" : "baseline (portable vectors)";
  k.widen_f16 = baseline::widen_f16;
  k.widen_u8 = baseline::widen_u8;
  k.narrow_f16 = baseline::narrow_f16;
  k.canonicalize_nans = baseline::canonicalize_nans;
  k.lerp_pairs = baseline::lerp_pairs;
  k.filter_row_halving = baseline::lerp_pairs;  // a prefix kernel with the same contract
  k.blend_rows = baseline::blend_rows;
  k.f16_maps = false;
  k.map_f32 = baseline::map_kernels<float>();
  k.map_f16 = baseline::map_kernels<std::uint16_t>();
  k.accumulate_y_sample = baseline::accumulate_y_sample;
  k.accumulate_outside = baseline::accumulate_outside;
  return k;
}

}  // namespace

constexpr SimdKernels kBaselineKernels = baseline_kernels();

}  // namespace rsz::cpu
