// RESAMPLE1 on the CPU. Nearest: per-axis index tables, rows copied as raw bits (no conversion, so float16 stays
// bit-exact). Linear: separable passes: each needed input row is filtered along W once into a float32 row (cached
// while consecutive output rows reuse it), rows are blended along H, then the planes along C and N: the same
// lerps, in the same order, as the reference (W, H, C, N), hence the same bits; a NaN result is stored as the
// canonical NaN (SEMANTICS.md §0), as the reference stores it.
#include <array>
#include <cstring>
#include <vector>

#include "cpu/cpu.h"
#include "cpu/parallel.h"
#include "cpu/rows.h"
#include "cpu/simd.h"
#include "cpu/tables.h"
#include "detail/access.h"
#include "detail/coords.h"
#include "rsz/float16.h"

namespace rsz::cpu {
namespace {

// Output rows per scheduling chunk: a few chunks per thread balance the load; larger chunks keep each chunk's row
// cache warm (a chunk starts with a cold cache and allocates its scratch rows).
std::int64_t row_grain(std::int64_t rows, int threads) {
  return std::max<std::int64_t>(8, rows / (static_cast<std::int64_t>(threads) * 4));
}

template <typename T>
void gather(const T* src, const std::int64_t* offsets, std::int64_t count, T* dst) {
  for (std::int64_t x = 0; x < count; ++x) dst[x] = src[offsets[x]];
}

// The integer factor k when the W table repeats every input element k times (out[x] = in[x / k], the UPSAMPLE_2D
// rule, which RESAMPLE1 gives for integer scales with pixel-centre offsets); 0 otherwise.
std::int64_t repeat_factor(const std::vector<std::int64_t>& offsets, std::int64_t in_w, std::int64_t in_stride) {
  const auto out_w = static_cast<std::int64_t>(offsets.size());
  if (in_w <= 0 || out_w % in_w != 0) return 0;
  const std::int64_t k = out_w / in_w;
  for (std::int64_t x = 0; x < out_w; ++x) {
    if (offsets[static_cast<std::size_t>(x)] != (x / k) * in_stride) return 0;
  }
  return k;
}

// Per axis, the input element offset (index times stride) each output index reads in nearest mode; the H offsets
// are relative to the band `rows` describes.
std::array<std::vector<std::int64_t>, 4> nearest_offsets(const ConstTensorView& input, const TensorView& output,
                                                         const ResampleParams& p, const detail::RowWindow& rows) {
  std::array<std::vector<std::int64_t>, 4> tables;
  for (int a = 0; a < 4; ++a) {
    const auto i = static_cast<std::size_t>(a);
    tables[i] = make_nearest_table(output.size(a), a == 2 ? rows.rows(input) : input.size(a), p.scales[i],
                                   p.input_pixel_offsets[i], p.output_pixel_offsets[i], p.rounding_direction);
    const std::int64_t base = a == 2 ? rows.base(input) : 0;
    for (auto& index : tables[i]) index = index * input.stride(a) + base;
  }
  return tables;
}

template <typename T>
void nearest_rows(const ConstTensorView& input, const TensorView& output, const ResampleParams& p, int threads,
                  const detail::RowWindow& window) {
  const std::array<std::vector<std::int64_t>, 4> tables = nearest_offsets(input, output, p, window);
  const std::int64_t oc = output.size(1);
  const std::int64_t oh = output.size(2);
  const std::int64_t ow = output.size(3);
  const std::int64_t out_sw = output.stride(3);
  const T* in = static_cast<const T*>(input.data());
  T* out = static_cast<T*>(output.data());
  const std::vector<std::int64_t>& wt = tables[3];
  const std::int64_t rows = output.size(0) * oc * oh;
  const bool stream = stream_output(output);
  const std::int64_t repeat = repeat_factor(wt, input.size(3), input.stride(3));
  const auto build_row = [&](const T* src, T* dst) {
    if (repeat > 0) {
      repeat_row(src, input.size(3), input.stride(3), repeat, dst);
    } else {
      gather(src, wt.data(), ow, dst);
    }
  };
  parallel_for(rows, row_grain(rows, threads), threads, [&](std::int64_t begin, std::int64_t end) {
    std::vector<T> gathered(stream ? static_cast<std::size_t>(ow) : 0);
    // An output row reading the same source row as the one before it (upscaling along H) is a copy of it.
    const T* previous_src = nullptr;
    const T* previous_dst = nullptr;
    const auto row_bytes = static_cast<std::size_t>(ow) * sizeof(T);
    for (std::int64_t row = begin; row < end; ++row) {
      const std::int64_t h = row % oh;
      const std::int64_t c = (row / oh) % oc;
      const std::int64_t n = row / (oh * oc);
      const T* src = in + tables[0][static_cast<std::size_t>(n)] + tables[1][static_cast<std::size_t>(c)] +
                     tables[2][static_cast<std::size_t>(h)];
      T* dst = out + n * output.stride(0) + c * output.stride(1) + h * output.stride(2);
      const bool same_source = src == previous_src;
      previous_src = src;
      if (stream) {
        if (!same_source) build_row(src, gathered.data());
        copy_bytes(dst, gathered.data(), row_bytes, true);
      } else if (out_sw == 1) {
        if (same_source) {
          std::memcpy(dst, previous_dst, row_bytes);
        } else {
          build_row(src, dst);
        }
        previous_dst = dst;
      } else {
        for (std::int64_t x = 0; x < ow; ++x) dst[x * out_sw] = src[wt[static_cast<std::size_t>(x)]];
      }
    }
    if (stream) stream_fence();
  });
}

// The leading outputs whose taps are adjacent (i1 = i0 + 1): all but those clamped at the right edge.
std::int64_t adjacent_taps(const LinearTable& t) {
  std::int64_t x = 0;
  const auto n = static_cast<std::int64_t>(t.i0.size());
  while (x < n && t.i1[static_cast<std::size_t>(x)] == t.i0[static_cast<std::size_t>(x)] + 1) ++x;
  return x;
}

// Whether the first `adjacent` outputs read every other pair of values: i0[x] = i0[0] + 2 x.
bool halving_taps(const LinearTable& t, std::int64_t adjacent) {
  for (std::int64_t x = 0; x < adjacent; ++x) {
    if (t.i0[static_cast<std::size_t>(x)] != t.i0[0] + 2 * x) return false;
  }
  return adjacent > 0;
}

// The longest such run around the middle of the table's first `adjacent` outputs (an empty one where the table
// does not double there). Found by checking the table itself, so the weights are the table's bit for bit.
DoublingRun doubling_run(const LinearTable& t, std::int64_t adjacent) {
  DoublingRun run;
  if (adjacent < 32) return run;
  const std::int64_t mid = adjacent / 4;  // output 2 * mid is mid-table
  for (int j = 0; j < 2; ++j) {
    const auto o = static_cast<std::size_t>(2 * mid + j);
    run.d[j] = t.i0[o] - mid;
    run.w[j] = t.w[o];
  }
  const auto pair_matches = [&](std::int64_t m) {
    if (m < 0 || 2 * m + 1 >= adjacent) return false;
    for (int j = 0; j < 2; ++j) {
      const auto o = static_cast<std::size_t>(2 * m + j);
      if (t.i0[o] != m + run.d[j] || t.w[o] != run.w[j]) return false;
    }
    return true;
  };
  std::int64_t first = mid;
  while (pair_matches(first - 1)) --first;
  std::int64_t last = mid;  // exclusive after the loop
  while (pair_matches(last)) ++last;
  run.begin = 2 * first;
  run.end = run.begin + (2 * (last - first)) / 16 * 16;
  return run;
}

// The W filter of one row: the table's vector kernels where they apply, the scalar lerps for the rest.
void filter_row(const SimdKernels& vec, const float* src, const LinearTable& t, std::int64_t adjacent, bool halving,
                const DoublingRun& doubling, float* dst) {
  const auto n = static_cast<std::int64_t>(t.w.size());
  std::int64_t done = 0;
  if (doubling.end > doubling.begin && vec.filter_row_doubling != nullptr) {
    lerp_taps(src, t.i0.data(), t.i1.data(), t.w.data(), 0, doubling.begin, dst);
    vec.filter_row_doubling(src, doubling, dst);
    const std::int64_t e = doubling.end;
    done = e + vec.lerp_pairs(src, t.i0.data() + e, t.w.data() + e, adjacent - e, dst + e);
  } else {
    done = halving ? vec.filter_row_halving(src, t.i0.data(), t.w.data(), adjacent, dst)
                   : vec.lerp_pairs(src, t.i0.data(), t.w.data(), adjacent, dst);
  }
  lerp_taps(src, t.i0.data(), t.i1.data(), t.w.data(), done, n, dst);
}

// A W-filtered input row, remembered by its input offset.
struct CachedRow {
  std::int64_t offset = -1;
  std::vector<float> values;
};

class LinearRowKernel {
 public:
  LinearRowKernel(const SimdKernels& vec, const ConstTensorView& input, const LinearTable& wt)
      : vec_(vec),
        input_(input),
        wt_(wt),
        width_(input.size(3)),
        out_width_(static_cast<std::int64_t>(wt.w.size())),
        adjacent_(adjacent_taps(wt)),
        halving_(halving_taps(wt, adjacent_)),
        doubling_(doubling_run(wt, adjacent_)) {
    scratch_.resize(static_cast<std::size_t>(width_));
    for (auto& slot : cache_) slot.values.resize(static_cast<std::size_t>(out_width_));
  }

  // dst = the W-filtered rows at offsets off0 and off1 blended along H with weight wy (not 0), in one pass over
  // packed float32 rows, for input rows that are each used by one output row (nothing to cache): halving along W,
  // or taps loaded in pairs. Returns false, having done nothing, where that does not apply.
  bool filter_and_blend(std::int64_t off0, std::int64_t off1, float wy, std::int64_t ahead, float* dst) {
    const auto fused = halving_ ? vec_.halve_and_blend != nullptr : vec_.pairs_and_blend != nullptr;
    if (!fused || input_.dtype() != DataType::Float32 || input_.stride(3) != 1) return false;
    const float* in = static_cast<const float*>(input_.data());
    const float* r0 = in + off0;
    const float* r1 = in + off1;
    const std::int64_t done =
        halving_ ? vec_.halve_and_blend(r0, r1, wt_.i0[0], wt_.w.data(), wy, adjacent_, ahead, dst)
                 : vec_.pairs_and_blend(r0, r1, wt_.i0.data(), wt_.w.data(), wy, adjacent_, dst);
    for (std::int64_t x = done; x < out_width_; ++x) {
      const auto i = static_cast<std::size_t>(x);
      const float top = detail::lerp(r0[wt_.i0[i]], r0[wt_.i1[i]], wt_.w[i]);
      const float bottom = detail::lerp(r1[wt_.i0[i]], r1[wt_.i1[i]], wt_.w[i]);
      dst[x] = detail::canonical_nan(top + wy * (bottom - top));
    }
    return true;
  }

  // The W-filtered row at input offset `offset`, for plane term `term` (0..3); each term keeps its last two rows.
  const float* filtered(int term, std::int64_t offset, std::int64_t keep) {
    CachedRow* slots = &cache_[static_cast<std::size_t>(term) * 2];
    for (int s = 0; s < 2; ++s) {
      if (slots[s].offset == offset) return slots[s].values.data();
    }
    CachedRow& victim = slots[0].offset == keep ? slots[1] : slots[0];
    filter(offset, victim.values.data());
    victim.offset = offset;
    return victim.values.data();
  }

 private:
  void filter(std::int64_t offset, float* dst) {
    const float* src;
    if (input_.dtype() == DataType::Float32 && input_.stride(3) == 1) {
      src = static_cast<const float*>(input_.data()) + offset;
    } else {
      load_row(vec_, input_.data(), input_.dtype(), offset, input_.stride(3), width_, scratch_.data());
      src = scratch_.data();
    }
    filter_row(vec_, src, wt_, adjacent_, halving_, doubling_, dst);
  }

  const SimdKernels& vec_;
  const ConstTensorView& input_;
  const LinearTable& wt_;
  std::int64_t width_;
  std::int64_t out_width_;
  std::int64_t adjacent_;
  bool halving_;
  DoublingRun doubling_;
  std::vector<float> scratch_;
  std::array<CachedRow, 8> cache_;
};

void linear(const SimdKernels& vec, const ConstTensorView& input, const TensorView& output, const ResampleParams& p,
            int threads, const detail::RowWindow& window) {
  std::array<LinearTable, 4> t;
  for (int a = 0; a < 4; ++a) {
    const auto i = static_cast<std::size_t>(a);
    t[i] = make_linear_table(output.size(a), a == 2 ? window.rows(input) : input.size(a), p.scales[i],
                             p.input_pixel_offsets[i], p.output_pixel_offsets[i]);
  }
  const std::int64_t base = window.base(input);  // H offsets are relative to the band
  const std::int64_t oc = output.size(1);
  const std::int64_t oh = output.size(2);
  const std::int64_t ow = output.size(3);
  const std::int64_t rows = output.size(0) * oc * oh;
  const bool stream = stream_output(output);
  // Whether consecutive output rows never share an input row (downscaling along H by 2 or more): W-filtered rows
  // are then not worth caching.
  bool rows_used_once = true;
  for (std::size_t h = 0; h + 1 < t[2].i0.size(); ++h) {
    rows_used_once = rows_used_once && t[2].i0[h + 1] > t[2].i1[h];
  }
  // Packed float32 rows that stay in the caches are blended straight into the output.
  const bool direct = output.dtype() == DataType::Float32 && output.stride(3) == 1 && !stream;
  // Packed float16 rows: blended and narrowed in one pass.
  const bool narrow_blend =
      output.dtype() == DataType::Float16 && output.stride(3) == 1 && vec.blend_rows_f16 != nullptr;
  // Large packed float32 rows: blended straight into the output with streaming stores.
  const bool stream_blend = output.dtype() == DataType::Float32 && stream && vec.blend_rows_stream != nullptr;
  parallel_for(rows, row_grain(rows, threads), threads, [&](std::int64_t begin, std::int64_t end) {
    LinearRowKernel kernel(vec, input, t[3]);
    std::array<std::vector<float>, 4> terms;
    for (auto& term : terms) term.resize(static_cast<std::size_t>(ow));
    for (std::int64_t row = begin; row < end; ++row) {
      const auto h = static_cast<std::size_t>(row % oh);
      const auto c = static_cast<std::size_t>((row / oh) % oc);
      const auto n = static_cast<std::size_t>(row / (oh * oc));
      const std::int64_t out_offset = static_cast<std::int64_t>(n) * output.stride(0) +
                                      static_cast<std::int64_t>(c) * output.stride(1) +
                                      static_cast<std::int64_t>(h) * output.stride(2);
      // Plane terms in the reference's order: (n0, c0), (n0, c1), (n1, c0), (n1, c1); zero weights skip terms.
      const bool two_c = t[1].w[c] != 0.0f;
      const bool two_n = t[0].w[n] != 0.0f;
      if (!two_c && !two_n) {
        // The common case (whole N and C indices): one plane, blended along H straight from the cached rows.
        const std::int64_t plane = base + t[0].i0[n] * input.stride(0) + t[1].i0[c] * input.stride(1);
        const std::int64_t off0 = plane + t[2].i0[h] * input.stride(2);
        const std::int64_t off1 = plane + t[2].i1[h] * input.stride(2);
        const float wy = t[2].w[h];
        float* blended = direct ? static_cast<float*>(output.data()) + out_offset : terms[0].data();
        const float* values = nullptr;
        if (wy != 0.0f && rows_used_once && kernel.filter_and_blend(off0, off1, wy, 2 * input.stride(2), blended)) {
          values = blended;
        } else {
          values = kernel.filtered(0, off0, off1);
          if (wy != 0.0f && narrow_blend) {
            vec.blend_rows_f16(static_cast<std::uint16_t*>(output.data()) + out_offset, values,
                               kernel.filtered(0, off1, off0), wy, ow, stream);
            continue;
          }
          if (wy != 0.0f && stream_blend) {
            vec.blend_rows_stream(static_cast<float*>(output.data()) + out_offset, values,
                                  kernel.filtered(0, off1, off0), wy, ow);
            continue;
          }
          if (wy != 0.0f) {
            vec.blend_rows(blended, values, kernel.filtered(0, off1, off0), wy, ow);
            values = blended;
          }
        }
        if (direct && values == blended) continue;
        // A W-filtered row stored as it is (wy == 0) may hold any NaN: canonicalized on the way out.
        store_row_computed(vec, output.data(), output.dtype(), out_offset, output.stride(3), ow, values, stream);
        continue;
      }
      for (int k = 0; k < 4; ++k) {
        const bool second_n = k >= 2;
        const bool second_c = k % 2 == 1;
        if ((second_n && !two_n) || (second_c && !two_c)) continue;
        const std::int64_t plane = base + (second_n ? t[0].i1[n] : t[0].i0[n]) * input.stride(0) +
                                   (second_c ? t[1].i1[c] : t[1].i0[c]) * input.stride(1);
        const std::int64_t off0 = plane + t[2].i0[h] * input.stride(2);
        const std::int64_t off1 = plane + t[2].i1[h] * input.stride(2);
        float* dst = terms[static_cast<std::size_t>(k)].data();
        const float* r0 = kernel.filtered(k, off0, off1);
        std::memcpy(dst, r0, static_cast<std::size_t>(ow) * sizeof(float));
        if (t[2].w[h] != 0.0f) vec.blend_rows(dst, dst, kernel.filtered(k, off1, off0), t[2].w[h], ow);
      }
      if (two_c) {
        vec.blend_rows(terms[0].data(), terms[0].data(), terms[1].data(), t[1].w[c], ow);
        if (two_n) vec.blend_rows(terms[2].data(), terms[2].data(), terms[3].data(), t[1].w[c], ow);
      }
      if (two_n) vec.blend_rows(terms[0].data(), terms[0].data(), terms[2].data(), t[0].w[n], ow);
      // terms[0] now holds every term, blended in the reference's order.
      store_row(vec, output.data(), output.dtype(), out_offset, output.stride(3), ow, terms[0].data(), stream);
    }
    if (stream) stream_fence();
  });
}

// Nearest from unorm samples: each output row is its gathered samples widened (load_row with the W table's
// offsets as one gather per element), then stored.
void nearest_unorm(const SimdKernels& vec, const ConstTensorView& input, const TensorView& output,
                   const ResampleParams& p, int threads, const detail::RowWindow& window) {
  const std::array<std::vector<std::int64_t>, 4> tables = nearest_offsets(input, output, p, window);
  const std::int64_t oc = output.size(1);
  const std::int64_t oh = output.size(2);
  const std::int64_t ow = output.size(3);
  const std::int64_t rows = output.size(0) * oc * oh;
  const bool stream = stream_output(output);
  parallel_for(rows, row_grain(rows, threads), threads, [&](std::int64_t begin, std::int64_t end) {
    std::vector<float> values(static_cast<std::size_t>(ow));
    for (std::int64_t row = begin; row < end; ++row) {
      const auto h = static_cast<std::size_t>(row % oh);
      const auto c = static_cast<std::size_t>((row / oh) % oc);
      const auto n = static_cast<std::size_t>(row / (oh * oc));
      const std::int64_t src = tables[0][n] + tables[1][c] + tables[2][h];
      for (std::int64_t x = 0; x < ow; ++x) {
        load_row(vec, input.data(), input.dtype(), src + tables[3][static_cast<std::size_t>(x)], 1, 1,
                 values.data() + x);
      }
      store_row(vec, output.data(), output.dtype(),
                static_cast<std::int64_t>(n) * output.stride(0) + static_cast<std::int64_t>(c) * output.stride(1) +
                    static_cast<std::int64_t>(h) * output.stride(2),
                output.stride(3), ow, values.data(), stream);
    }
    if (stream) stream_fence();
  });
}

}  // namespace

void resample_cpu(const ConstTensorView& input, const TensorView& output, const ResampleParams& params, int threads,
                  const detail::RowWindow& rows) {
  const SimdKernels& vec = simd();
  if (params.interpolation == InterpolationMode::Nearest) {
    if (input.dtype() == DataType::UNorm8 || input.dtype() == DataType::UNorm16) {
      nearest_unorm(vec, input, output, params, threads, rows);
    } else if (input.dtype() == DataType::Float32) {
      nearest_rows<float>(input, output, params, threads, rows);
    } else {
      nearest_rows<std::uint16_t>(input, output, params, threads, rows);
    }
  } else if (params.antialiased && (params.scales[0] < 1.0f || params.scales[1] < 1.0f ||
                                     params.scales[2] < 1.0f || params.scales[3] < 1.0f)) {
    resample_antialiased_cpu(vec, input, output, params, threads, rows);
  } else {
    linear(vec, input, output, params, threads, rows);
  }
}

}  // namespace rsz::cpu
