// RESAMPLE3's antialiased linear mode on the CPU (SEMANTICS.md §1.7). Separable like the 2-tap path: each needed
// input row is filtered along W once into a float32 row (kept in a small cache while later output rows reuse it),
// then rows are combined along H, the planes along C and N: per output element the same operations in the same
// order as the reference (W, H, C, N; an antialiased axis is a weighted sum in index order, any other axis the 2-tap
// lerp), hence the same bits.
#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

#include "cpu/cpu.h"
#include "cpu/parallel.h"
#include "cpu/rows.h"
#include "cpu/simd.h"
#include "cpu/tables.h"
#include "detail/coords.h"
#include "reference/reference.h"

namespace rsz::cpu {
namespace {

// Tables larger than this many taps in all (a scale far smaller than the output/input size ratio) are not built:
// such calls go through the reference loop, which needs no tables.
constexpr std::int64_t kMaxTableTaps = std::int64_t{1} << 26;

// Output taps of one axis, bounded by the input length (an upper bound of its table size).
std::int64_t table_taps(std::int64_t out_size, std::int64_t in_size, float scale, bool antialiased) {
  if (!(antialiased && scale < 1.0f)) return out_size * 2;
  const float support = 2.0f / scale + 3.0f;
  const std::int64_t per = support < static_cast<float>(in_size) ? static_cast<std::int64_t>(support) : in_size;
  return detail::saturating_mul(static_cast<std::uint64_t>(out_size), static_cast<std::uint64_t>(per)) >
                 static_cast<std::uint64_t>(kMaxTableTaps)
             ? kMaxTableTaps + 1
             : out_size * per;
}

// dst[x] = the weighted sum of t's taps of output x over src, for x in [begin, end).
void sum_taps(const float* src, const TapTable& t, std::int64_t begin, std::int64_t end, float* dst) {
  for (std::int64_t x = begin; x < end; ++x) {
    const auto i = static_cast<std::size_t>(x);
    const float* v = src + t.first[i];
    const float* w = t.weights.data() + t.start[i];
    float acc = w[0] * v[0];
    for (std::int32_t k = 1; k < t.count[i]; ++k) acc = detail::weighted_tap(acc, w[k], v[k]);
    dst[x] = acc;
  }
}

// A W-filtered input row, remembered by its input offset; `used` orders the evictions.
struct CachedRow {
  std::int64_t offset = -1;
  std::uint64_t used = 0;
  std::vector<float> values;
};

class AntialiasKernel {
 public:
  AntialiasKernel(const SimdKernels& vec, const ConstTensorView& input, std::int64_t base,
                  const std::array<TapTable, 4>& t, const std::vector<float>& wt, const LinearTable& w_lerp,
                  std::size_t cache_rows)
      : vec_(vec),
        input_(input),
        base_(base),
        t_(t),
        wt_(wt),
        w_lerp_(w_lerp),
        out_w_(static_cast<std::int64_t>(t[3].first.size())) {
    scratch_.resize(static_cast<std::size_t>(input.size(3)));
    cache_.resize(cache_rows);
    for (auto& row : cache_) row.values.resize(static_cast<std::size_t>(out_w_));
    for (auto& level : levels_) level.resize(static_cast<std::size_t>(out_w_));
    temp_.resize(static_cast<std::size_t>(out_w_));
  }

  // The output row (n, c, h), before rounding to the output type.
  const float* row(std::size_t n, std::size_t c, std::size_t h) {
    combine(0, n, [&](std::int64_t ni, float* dst) {
      combine(1, c, [&](std::int64_t ci, float* dst_c) {
        h_row(base_ + ni * input_.stride(0) + ci * input_.stride(1), h, dst_c);
      }, dst);
    }, levels_[0].data());
    return levels_[0].data();
  }

 private:
  // dst = axis a's filter (N or C) over the rows produce(index, buffer) gives for each of its taps of output o.
  template <typename Produce>
  void combine(int a, std::size_t o, const Produce& produce, float* dst) {
    const TapTable& t = t_[static_cast<std::size_t>(a)];
    const std::int64_t first = t.first[o];
    const std::int32_t count = t.count[o];
    const float* w = t.weights.data() + t.start[o];
    if (!t.sum && count == 1) {
      produce(first, dst);
      return;
    }
    // The inner level's result goes to a buffer of its own: levels_[a + 1] (C's is the H level's output).
    float* inner = a == 0 ? levels_[1].data() : temp_.data();
    produce(first, dst);
    if (t.sum) {
      for (std::int64_t x = 0; x < out_w_; ++x) dst[x] = w[0] * dst[x];
    }
    for (std::int32_t k = 1; k < count; ++k) {
      produce(first + k, inner);
      if (t.sum) {
        for (std::int64_t x = 0; x < out_w_; ++x) dst[x] = detail::weighted_tap(dst[x], w[k], inner[x]);
      } else {
        const float wl = w[0];
        for (std::int64_t x = 0; x < out_w_; ++x) dst[x] = dst[x] + wl * (inner[x] - dst[x]);
      }
    }
  }

  // dst = the H filter of output row h over the W-filtered rows of the plane at `plane`.
  void h_row(std::int64_t plane, std::size_t h, float* dst) {
    const TapTable& t = t_[2];
    const std::int64_t first = t.first[h];
    const std::int32_t count = t.count[h];
    const float* w = t.weights.data() + t.start[h];
    const auto offset = [&](std::int64_t k) { return plane + (first + k) * input_.stride(2); };
    if (t.sum) {
      const float* r = filtered(offset(0));
      for (std::int64_t x = 0; x < out_w_; ++x) dst[x] = w[0] * r[x];
      for (std::int32_t k = 1; k < count; ++k) {
        r = filtered(offset(k));
        for (std::int64_t x = 0; x < out_w_; ++x) dst[x] = detail::weighted_tap(dst[x], w[k], r[x]);
      }
      return;
    }
    const float* a = filtered(offset(0));
    if (count == 1) {
      std::memcpy(dst, a, static_cast<std::size_t>(out_w_) * sizeof(float));
      return;
    }
    const float* b = filtered(offset(1));
    const float wl = w[0];
    for (std::int64_t x = 0; x < out_w_; ++x) dst[x] = a[x] + wl * (b[x] - a[x]);
  }

  // The W-filtered input row at `offset` (from the cache, or filtered into the least recently used slot).
  const float* filtered(std::int64_t offset) {
    ++clock_;
    CachedRow* victim = &cache_[0];
    for (auto& row : cache_) {
      if (row.offset == offset) {
        row.used = clock_;
        return row.values.data();
      }
      if (row.used < victim->used) victim = &row;
    }
    const float* src;
    if (input_.dtype() == DataType::Float32 && input_.stride(3) == 1) {
      src = static_cast<const float*>(input_.data()) + offset;
    } else {
      load_row(vec_, input_.data(), input_.dtype(), offset, input_.stride(3), input_.size(3), scratch_.data());
      src = scratch_.data();
    }
    float* dst = victim->values.data();
    const TapTable& t = t_[3];
    if (t.sum) {
      const std::int64_t done = wt_.empty() ? 0 : vec_.sum_taps(src, t, wt_.data(), out_w_, dst);
      sum_taps(src, t, done, out_w_, dst);
    } else {
      lerp_taps(src, w_lerp_.i0.data(), w_lerp_.i1.data(), w_lerp_.w.data(), 0, out_w_, dst);
    }
    victim->offset = offset;
    victim->used = clock_;
    return dst;
  }

  const SimdKernels& vec_;
  const ConstTensorView& input_;
  std::int64_t base_;  // added to every offset: H indices are the whole input's, the band holds some of its rows
  const std::array<TapTable, 4>& t_;
  const std::vector<float>& wt_;
  const LinearTable& w_lerp_;
  std::int64_t out_w_;
  std::vector<float> scratch_;
  std::vector<CachedRow> cache_;
  std::uint64_t clock_ = 0;
  std::array<std::vector<float>, 2> levels_;  // the N level's result, the C level's result
  std::vector<float> temp_;                   // the H level's result under a C lerp or sum
};

}  // namespace

void resample_antialiased_cpu(const SimdKernels& vec, const ConstTensorView& input, const TensorView& output,
                              const ResampleParams& p, int threads, const detail::RowWindow& window) {
  const std::array<std::int64_t, 4> lengths{input.size(0), input.size(1), window.rows(input), input.size(3)};
  std::int64_t taps = 0;
  for (int a = 0; a < 4; ++a) {
    const auto i = static_cast<std::size_t>(a);
    taps += table_taps(output.size(a), lengths[i], p.scales[i], p.antialiased);
    if (taps > kMaxTableTaps) {
      reference::resample_reference(input, output, p, window);
      return;
    }
  }
  std::array<TapTable, 4> t;
  for (int a = 0; a < 4; ++a) {
    const auto i = static_cast<std::size_t>(a);
    t[i] = make_tap_table(output.size(a), lengths[i], p.scales[i], p.input_pixel_offsets[i],
                          p.output_pixel_offsets[i], p.antialiased);
  }
  const std::int64_t ow = output.size(3);
  LinearTable w_lerp;
  std::vector<float> wt;  // W weights transposed for vec.sum_taps
  if (t[3].sum) {
    if (vec.sum_taps != nullptr && input.size(3) < (std::int64_t{1} << 31) &&
        static_cast<std::int64_t>(t[3].max_count) * ow <= kMaxTableTaps) {
      wt.assign(static_cast<std::size_t>(t[3].max_count * ow), 0.0f);
      for (std::int64_t x = 0; x < ow; ++x) {
        const auto i = static_cast<std::size_t>(x);
        for (std::int32_t k = 0; k < t[3].count[i]; ++k) {
          wt[static_cast<std::size_t>(k * ow + x)] = t[3].weights[static_cast<std::size_t>(t[3].start[i] + k)];
        }
      }
    }
  } else {
    w_lerp = make_linear_table(ow, input.size(3), p.scales[3], p.input_pixel_offsets[3], p.output_pixel_offsets[3]);
  }
  const std::int64_t oc = output.size(1);
  const std::int64_t oh = output.size(2);
  const std::int64_t rows = output.size(0) * oc * oh;
  // Enough rows for every tap of an output row, twice (the next output row reuses most of them).
  const auto cache_rows = static_cast<std::size_t>(std::min<std::int64_t>(
      256, std::max<std::int64_t>(4, 2 * std::int64_t{t[2].max_count} * t[1].max_count * t[0].max_count)));
  const bool stream = stream_output(output);
  const std::int64_t grain = std::max<std::int64_t>(8, rows / (static_cast<std::int64_t>(threads) * 4));
  parallel_for(rows, grain, threads, [&](std::int64_t begin, std::int64_t end) {
    AntialiasKernel kernel(vec, input, window.base(input), t, wt, w_lerp, cache_rows);
    for (std::int64_t row = begin; row < end; ++row) {
      const auto h = static_cast<std::size_t>(row % oh);
      const auto c = static_cast<std::size_t>((row / oh) % oc);
      const auto n = static_cast<std::size_t>(row / (oh * oc));
      store_row_computed(vec, output.data(), output.dtype(),
                         static_cast<std::int64_t>(n) * output.stride(0) +
                             static_cast<std::int64_t>(c) * output.stride(1) +
                             static_cast<std::int64_t>(h) * output.stride(2),
                         output.stride(3), ow, kernel.row(n, c, h), stream);
    }
    if (stream) stream_fence();
  });
}

}  // namespace rsz::cpu
