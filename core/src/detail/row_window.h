// Which rows of a taller input a resample input holds (rsz::resample_rows): the kernels build their H coordinates
// for the whole height and read input row r at offset (r - first) * stride(2) of the band.
#pragma once

#include <cstdint>

#include "rsz/tensor.h"

namespace rsz::detail {

struct RowWindow {
  std::int64_t first = 0;
  std::int64_t height = 0;  // 0: the input is whole

  // The H length the coordinates are computed for.
  std::int64_t rows(const ConstTensorView& band) const { return height > 0 ? height : band.size(2); }
  // Added to every element offset computed from whole-input indices.
  std::int64_t base(const ConstTensorView& band) const { return -first * band.stride(2); }
};

}  // namespace rsz::detail
