#include "cpu/rows.h"

#if defined(__x86_64__)
#include <immintrin.h>  // SSE2 streaming stores (every x86-64 CPU)
#endif

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "detail/access.h"
#include "detail/coords.h"
#include "rsz/float16.h"

namespace rsz::cpu {

void lerp_taps(const float* src, const std::int64_t* i0, const std::int64_t* i1, const float* w, std::int64_t begin,
               std::int64_t end, float* dst) {
  for (std::int64_t x = begin; x < end; ++x) dst[x] = detail::lerp(src[i0[x]], src[i1[x]], w[x]);
}

void store_row_computed(const SimdKernels& vec, void* base, DataType type, std::int64_t offset, std::int64_t stride,
                        std::int64_t count, const float* src, bool stream) {
  // In cache-sized pieces: canonicalized into a local buffer, then stored as store_row does.
  constexpr std::int64_t kPiece = 1024;
  float piece[kPiece];
  for (std::int64_t begin = 0; begin < count; begin += kPiece) {
    const std::int64_t n = std::min(kPiece, count - begin);
    std::memcpy(piece, src + begin, static_cast<std::size_t>(n) * sizeof(float));
    vec.canonicalize_nans(piece, n);
    store_row(vec, base, type, offset + begin * stride, stride, n, piece, stream);
  }
}

void copy_bytes(void* dst, const void* src, std::size_t bytes, bool stream) {
#if !defined(__x86_64__)
  stream = false;  // streaming stores are an x86-64 path; elsewhere a plain copy writes the same bytes
#endif
  if (!stream) {
    std::memcpy(dst, src, bytes);
    return;
  }
  auto* d = static_cast<char*>(dst);
  const auto* s = static_cast<const char*>(src);
  // Plain stores up to the first 16-byte boundary, SSE2 streaming stores (every x86-64 CPU) after it.
  const std::size_t misalignment = reinterpret_cast<std::uintptr_t>(d) % 16;
  const std::size_t head = std::min(bytes, misalignment == 0 ? 0 : 16 - misalignment);
  std::memcpy(d, s, head);
  d += head;
  s += head;
  bytes -= head;
#if defined(__x86_64__)
  for (; bytes >= 16; bytes -= 16, d += 16, s += 16) {
    _mm_stream_si128(reinterpret_cast<__m128i*>(d), _mm_loadu_si128(reinterpret_cast<const __m128i*>(s)));
  }
#endif
  std::memcpy(d, s, bytes);
}

void stream_fence() {
#if defined(__x86_64__)
  _mm_sfence();
#endif
}

bool stream_output(const TensorView& output) {
  return output.stride(output.rank() - 1) == 1 &&
         output.element_count() * static_cast<std::int64_t>(element_size(output.dtype())) >= kStreamOutputBytes;
}

const float* unorm_table(DataType type) {
  // Every sample's value (detail::unorm_to_float), computed once: 256 floats for unorm8, 65536 for unorm16.
  static const std::vector<float> table8 = [] {
    std::vector<float> t(256);
    for (std::uint32_t p = 0; p < 256; ++p) t[p] = detail::unorm_to_float(p, 8);
    return t;
  }();
  if (type == DataType::UNorm8) return table8.data();
  static const std::vector<float> table16 = [] {
    std::vector<float> t(65536);
    for (std::uint32_t p = 0; p < 65536; ++p) t[p] = detail::unorm_to_float(p, 16);
    return t;
  }();
  return table16.data();
}

void load_row(const SimdKernels& vec, const void* base, DataType type, std::int64_t offset, std::int64_t stride,
              std::int64_t count, float* dst) {
  if (type == DataType::UNorm8 || type == DataType::UNorm16) {
    const float* table = unorm_table(type);
    if (type == DataType::UNorm8) {
      const std::uint8_t* src = static_cast<const std::uint8_t*>(base) + offset;
      for (std::int64_t i = stride > 0 ? vec.widen_u8(src, stride, count, dst) : 0; i < count; ++i) {
        dst[i] = table[src[i * stride]];
      }
    } else {
      const std::uint16_t* src = static_cast<const std::uint16_t*>(base) + offset;
      for (std::int64_t i = 0; i < count; ++i) dst[i] = table[src[i * stride]];
    }
    return;
  }
  if (type == DataType::Float32) {
    const float* src = static_cast<const float*>(base) + offset;
    if (stride == 1) {
      std::memcpy(dst, src, static_cast<std::size_t>(count) * sizeof(float));
    } else {
      for (std::int64_t i = 0; i < count; ++i) dst[i] = src[i * stride];
    }
    return;
  }
  const std::uint16_t* src = static_cast<const std::uint16_t*>(base) + offset;
  std::int64_t i = 0;
  if (stride == 1) i = vec.widen_f16(src, count, dst);
  for (; i < count; ++i) dst[i] = float16_bits_to_float(src[i * stride]);
}

void store_row(const SimdKernels& vec, void* base, DataType type, std::int64_t offset, std::int64_t stride,
               std::int64_t count, const float* src, bool stream) {
  if (type == DataType::Float32) {
    float* dst = static_cast<float*>(base) + offset;
    if (stride == 1) {
      copy_bytes(dst, src, static_cast<std::size_t>(count) * sizeof(float), stream);
    } else {
      for (std::int64_t i = 0; i < count; ++i) dst[i * stride] = src[i];
    }
    return;
  }
  std::uint16_t* dst = static_cast<std::uint16_t*>(base) + offset;
  if (stride == 1 && stream) {
    // Narrowed in cache-sized pieces, then streamed.
    constexpr std::int64_t kPiece = 1024;
    std::uint16_t piece[kPiece];
    for (std::int64_t begin = 0; begin < count; begin += kPiece) {
      const std::int64_t n = std::min(kPiece, count - begin);
      store_row(vec, piece, DataType::Float16, 0, 1, n, src + begin, false);
      copy_bytes(dst + begin, piece, static_cast<std::size_t>(n) * sizeof(std::uint16_t), true);
    }
    return;
  }
  std::int64_t i = 0;
  if (stride == 1) i = vec.narrow_f16(src, count, dst);
  for (; i < count; ++i) dst[i * stride] = float_to_float16_bits(src[i]);
}

}  // namespace rsz::cpu
