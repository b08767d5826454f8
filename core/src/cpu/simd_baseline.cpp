// The baseline x86-64 table of the CPU backend's vector kernels (simd.h): the kernels written once with GCC vector
// extensions, at 4 lanes (SSE2); no prefix kernels (they compute nothing and the callers' scalar loops do it all)
// and none of the strategies that only pay with AVX2.
#include <immintrin.h>

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
std::int64_t lerp_pairs(const float*, const std::int64_t*, const float*, std::int64_t, float*) { return 0; }

#define RSZ_SIMD_LANES 4
#include "cpu/roi_align_kernels.h"
#include "cpu/row_kernels.h"
#undef RSZ_SIMD_LANES

}  // namespace
}  // namespace rsz::cpu::baseline

namespace rsz::cpu {

constexpr SimdKernels kBaselineKernels = {
    Isa::Baseline,
    "baseline x86-64",
    baseline::widen_f16,
    baseline::narrow_f16,
    baseline::canonicalize_nans,
    baseline::lerp_pairs,
    baseline::lerp_pairs,  // filter_row_halving: a prefix kernel with the same contract
    nullptr,
    nullptr,
    nullptr,
    baseline::blend_rows,
    nullptr,
    nullptr,
    nullptr,
    false,
    baseline::map_kernels<float>(),
    baseline::map_kernels<std::uint16_t>(),
    baseline::accumulate_y_sample,
    baseline::accumulate_outside,
};

}  // namespace rsz::cpu
