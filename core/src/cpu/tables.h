// Per-axis index/weight tables for RESAMPLE1, built once from detail/coords.h and shared by all channels.
#pragma once

#include <cstdint>
#include <vector>

#include "detail/coords.h"

namespace rsz::cpu {

struct LinearTable {
  std::vector<std::int64_t> i0;
  std::vector<std::int64_t> i1;
  std::vector<float> w;
};

inline LinearTable make_linear_table(std::int64_t out_size, std::int64_t in_size, float scale, float input_offset,
                                     float output_offset) {
  LinearTable t;
  t.i0.resize(static_cast<std::size_t>(out_size));
  t.i1.resize(static_cast<std::size_t>(out_size));
  t.w.resize(static_cast<std::size_t>(out_size));
  for (std::int64_t o = 0; o < out_size; ++o) {
    const auto taps =
        detail::linear_taps(detail::resample_source_coord(o, scale, input_offset, output_offset), in_size);
    const auto i = static_cast<std::size_t>(o);
    t.i0[i] = taps.i0;
    t.i1[i] = taps.i1;
    t.w[i] = taps.w;
  }
  return t;
}

inline std::vector<std::int64_t> make_nearest_table(std::int64_t out_size, std::int64_t in_size, float scale,
                                                    float input_offset, float output_offset) {
  std::vector<std::int64_t> t(static_cast<std::size_t>(out_size));
  for (std::int64_t o = 0; o < out_size; ++o) {
    t[static_cast<std::size_t>(o)] =
        detail::nearest_index(detail::resample_source_coord(o, scale, input_offset, output_offset), in_size);
  }
  return t;
}

}  // namespace rsz::cpu
