// Reads from one 2-D plane of a strided tensor, shared by the reference kernels.
#pragma once

#include <cstdint>

#include "detail/access.h"
#include "detail/coords.h"

namespace rsz::reference {

// Bilinear read: combine along x first, then y, each step detail::lerp (a zero weight takes one tap).
inline float read_bilinear(const void* data, DataType type, std::int64_t plane_offset, std::int64_t stride_y,
                           std::int64_t stride_x, const detail::LinearTaps& ty, const detail::LinearTaps& tx) {
  const auto row = [&](std::int64_t y) {
    const std::int64_t base = plane_offset + y * stride_y;
    const float a = detail::load_element(data, type, base + tx.i0 * stride_x);
    if (tx.w == 0.0f) return a;
    return detail::lerp(a, detail::load_element(data, type, base + tx.i1 * stride_x), tx.w);
  };
  const float top = row(ty.i0);
  if (ty.w == 0.0f) return top;
  return detail::lerp(top, row(ty.i1), ty.w);
}

}  // namespace rsz::reference
