// Moving rows between tensors of either float type and float32 scratch buffers. float16 conversion goes through the
// call's SimdKernels table (F16C instructions where the CPU has them) and the portable conversion for the rest; both
// round to nearest even and keep NaN and infinity, so results do not depend on the machine.
#pragma once

#include <cstddef>
#include <cstdint>

#include "cpu/simd.h"
#include "rsz/tensor.h"

namespace rsz::cpu {

// dst[i] = element (offset + i * stride) of a float32, float16, unorm8 or unorm16 buffer, widened, for i < count.
void load_row(const SimdKernels& vec, const void* base, DataType type, std::int64_t offset, std::int64_t stride,
              std::int64_t count, float* dst);
// Element (offset + i * stride) = src[i], rounded once to the buffer's type, for i < count. `stream`: see
// copy_bytes.
void store_row(const SimdKernels& vec, void* base, DataType type, std::int64_t offset, std::int64_t stride,
               std::int64_t count, const float* src, bool stream = false);

// store_row for computed results (SEMANTICS.md §0): the values stored are vec.canonicalize_nans of src (src itself is
// left as it is).
void store_row_computed(const SimdKernels& vec, void* base, DataType type, std::int64_t offset, std::int64_t stride,
                        std::int64_t count, const float* src, bool stream = false);

// dst[x] = detail::lerp(src[i0[x]], src[i1[x]], w[x]) (the first tap alone where w[x] is 0) for x in [begin, end):
// the scalar two-tap filter of the resample W axis and the ROI align x samples, and the edge of their vector forms.
void lerp_taps(const float* src, const std::int64_t* i0, const std::int64_t* i1, const float* w, std::int64_t begin,
               std::int64_t end, float* dst);

// dst = every element of the row at src (elements `stride` apart) repeated k times: in_w * k elements, the
// nearest-neighbour rule for integer upscaling. Raw copies, so any element type keeps its bits.
template <typename T>
void repeat_row(const T* src, std::int64_t in_w, std::int64_t stride, std::int64_t k, T* dst) {
  if (k == 2 && stride == 1) {  // the common factor, in a form the compiler vectorizes
    for (std::int64_t x = 0; x < in_w; ++x) dst[2 * x] = dst[2 * x + 1] = src[x];
    return;
  }
  for (std::int64_t x = 0; x < in_w; ++x) {
    const T v = src[x * stride];
    for (std::int64_t r = 0; r < k; ++r) *dst++ = v;
  }
}

// memcpy, or with `stream` non-temporal stores: whole cache lines go to memory without first being read, so an
// output much larger than the caches costs its size once in memory traffic rather than twice. Streamed stores are
// weakly ordered: a kernel calls stream_fence() at the end of each range of work it wrote with them.
void copy_bytes(void* dst, const void* src, std::size_t bytes, bool stream);
void stream_fence();

// Outputs at least this large are written with non-temporal stores (they cannot stay in the caches anyway).
constexpr std::int64_t kStreamOutputBytes = std::int64_t{16} << 20;
// Whether to stream the writes of `output`: large, with packed rows.
bool stream_output(const TensorView& output);

}  // namespace rsz::cpu
