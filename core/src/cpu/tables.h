// Per-axis index/weight tables for RESAMPLE1, built once from detail/coords.h and shared by all channels.
#pragma once

#include <algorithm>
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
                                                    float input_offset, float output_offset,
                                                    NearestRounding rounding) {
  std::vector<std::int64_t> t(static_cast<std::size_t>(out_size));
  for (std::int64_t o = 0; o < out_size; ++o) {
    t[static_cast<std::size_t>(o)] = detail::nearest_index(
        detail::resample_source_coord(o, scale, input_offset, output_offset), in_size, rounding);
  }
  return t;
}

// Outputs [begin, end) of a W table that doubles: output 2m + j (j = 0, 1) reads taps m + d[j] and m + d[j] + 1
// with weight w[j], the same for every m in the run. begin is even and the run is a whole number of 16 outputs.
struct DoublingRun {
  std::int64_t begin = 0;
  std::int64_t end = 0;
  std::int64_t d[2] = {0, 0};
  float w[2] = {0.0f, 0.0f};
};

// §1.7: an axis' filter for antialiased linear resampling. Output index o reads `count[o]` consecutive input indices
// from `first[o]` with the weights at weights[start[o]...]. `sum`: antialiased (scale < 1), a weighted sum in index
// order; otherwise the 2-tap lerp (count 1 or 2, weights[start[o]] the second tap's weight w).
struct TapTable {
  bool sum = false;
  std::vector<std::int64_t> first;
  std::vector<std::int32_t> count;
  std::vector<std::int64_t> start;
  std::vector<float> weights;
  std::int32_t max_count = 1;
  std::int64_t in_size = 0;  // the input length along the axis: taps lie in [0, in_size)
};

inline TapTable make_tap_table(std::int64_t out_size, std::int64_t in_size, float scale, float input_offset,
                               float output_offset, bool antialiased) {
  TapTable t;
  t.sum = antialiased && scale < 1.0f;
  t.in_size = in_size;
  const auto size = static_cast<std::size_t>(out_size);
  t.first.resize(size);
  t.count.resize(size);
  t.start.resize(size);
  std::vector<float> w;
  for (std::int64_t o = 0; o < out_size; ++o) {
    const auto i = static_cast<std::size_t>(o);
    const float x = detail::resample_source_coord(o, scale, input_offset, output_offset);
    t.start[i] = static_cast<std::int64_t>(t.weights.size());
    if (t.sum) {
      t.first[i] = detail::antialias_taps(x, in_size, scale, w);
      t.count[i] = static_cast<std::int32_t>(w.size());
      t.weights.insert(t.weights.end(), w.begin(), w.end());
    } else {
      const auto taps = detail::linear_taps(x, in_size);
      t.first[i] = taps.i0;
      t.count[i] = taps.w == 0.0f ? 1 : 2;  // i1 = i0 + 1 wherever w != 0
      t.weights.push_back(taps.w);
    }
    t.max_count = std::max(t.max_count, t.count[i]);
  }
  return t;
}

}  // namespace rsz::cpu
