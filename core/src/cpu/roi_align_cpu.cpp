// ROI_ALIGN on the CPU. Per ROI, the sample positions of every output column and row are computed once (the
// out-of-bounds test, the clamped taps and weights) and shared by all channels; each (ROI, channel) pair is an
// independent unit of work. Samples are read, combined and accumulated exactly as in the reference.
#include <vector>

#include "cpu/cpu.h"
#include "cpu/parallel.h"
#include "cpu/rows.h"
#include "detail/access.h"
#include "detail/coords.h"

namespace rsz::cpu {
namespace {

// One axis of one ROI: for output index o and sample k, entry o * samples + k.
struct SampleAxis {
  std::uint32_t samples = 1;
  std::vector<unsigned char> inside;  // the coordinate is within [-1, size]
  std::vector<std::int64_t> i0;       // offsets (index * stride)
  std::vector<std::int64_t> i1;
  std::vector<float> w;
};

SampleAxis make_axis(float start, float extent, std::int64_t out_size, std::int64_t in_size, std::int64_t stride,
                     const RoiAlignParams& p) {
  SampleAxis axis;
  axis.samples = detail::roi_sample_count(extent, out_size, p.minimum_samples_per_output, p.maximum_samples_per_output);
  const auto count = static_cast<std::size_t>(out_size) * axis.samples;
  axis.inside.resize(count);
  axis.i0.resize(count);
  axis.i1.resize(count);
  axis.w.resize(count);
  std::size_t e = 0;
  for (std::int64_t o = 0; o < out_size; ++o) {
    for (std::uint32_t k = 0; k < axis.samples; ++k, ++e) {
      const float x = detail::roi_sample_coord(start, extent, out_size, axis.samples, o, k, p.input_pixel_offset,
                                               p.output_pixel_offset, p.align_regions_to_corners);
      axis.inside[e] = !(x < -1.0f || x > static_cast<float>(in_size));
      const float clamped = detail::clamp_coord(x, in_size);
      if (p.interpolation == InterpolationMode::Nearest) {
        axis.i0[e] = axis.i1[e] = detail::nearest_index(clamped, in_size) * stride;
        axis.w[e] = 0.0f;
      } else {
        const auto taps = detail::linear_taps(clamped, in_size);
        axis.i0[e] = taps.i0 * stride;
        axis.i1[e] = taps.i1 * stride;
        axis.w[e] = taps.w;
      }
    }
  }
  return axis;
}

struct RoiTables {
  std::int64_t batch = 0;
  SampleAxis x;
  SampleAxis y;
  float count = 1.0f;
};

template <typename Load>
void pool_plane(const RoiTables& t, std::int64_t plane, const Load& load, std::int64_t out_h, std::int64_t out_w,
                const RoiAlignParams& p, float* dst) {
  const std::uint32_t sx = t.x.samples;
  const std::uint32_t sy = t.y.samples;
  for (std::int64_t oy = 0; oy < out_h; ++oy) {
    for (std::int64_t ox = 0; ox < out_w; ++ox) {
      float acc = 0.0f;
      bool first = true;
      for (std::uint32_t iy = 0; iy < sy; ++iy) {
        const auto ey = static_cast<std::size_t>(oy) * sy + iy;
        for (std::uint32_t ix = 0; ix < sx; ++ix) {
          const auto ex = static_cast<std::size_t>(ox) * sx + ix;
          float v;
          if (!(t.x.inside[ex] && t.y.inside[ey])) {
            v = p.out_of_bounds_input_value;
          } else {
            const std::int64_t r0 = plane + t.y.i0[ey];
            const float wx = t.x.w[ex];
            const float a = load(r0 + t.x.i0[ex]);
            const float top = wx == 0.0f ? a : detail::lerp(a, load(r0 + t.x.i1[ex]), wx);
            if (t.y.w[ey] == 0.0f) {
              v = top;
            } else {
              const std::int64_t r1 = plane + t.y.i1[ey];
              const float c = load(r1 + t.x.i0[ex]);
              const float bottom = wx == 0.0f ? c : detail::lerp(c, load(r1 + t.x.i1[ex]), wx);
              v = detail::lerp(top, bottom, t.y.w[ey]);
            }
          }
          if (p.reduction == RoiReduction::Average) {
            acc += v;
          } else if (first || v > acc) {
            acc = v;
          }
          first = false;
        }
      }
      dst[oy * out_w + ox] = p.reduction == RoiReduction::Average ? acc / t.count : acc;
    }
  }
}

// One bilinear sample for `count` channels: along x, then y; a zero weight takes the first tap only.
template <bool kLerpX, bool kLerpY>
inline void interpolate(const float* a, const float* b, const float* d0, const float* d1, float wx, float wy,
                        std::int64_t count, float* value) {
  for (std::int64_t c = 0; c < count; ++c) {
    const float top = kLerpX ? a[c] + wx * (b[c] - a[c]) : a[c];
    if (kLerpY) {
      const float bottom = kLerpX ? d0[c] + wx * (d1[c] - d0[c]) : d0[c];
      value[c] = top + wy * (bottom - top);
    } else {
      value[c] = top;
    }
  }
}

// Channels-last pooling of one ROI over all channels at once: `map` is the batch's H x W x C float32 copy, so the
// four taps of a sample are contiguous runs of C values and every per-sample decision (out of bounds, zero weights)
// is taken once for all channels. The arithmetic per channel is the reference's, in the reference's order.
__attribute__((target_clones("avx2", "default"))) void pool_channels_last(
    const RoiTables& t, const float* map, std::int64_t channels, std::int64_t out_h,
    std::int64_t out_w, const RoiAlignParams& p, float* acc, float* value, float* dst) {
  const std::uint32_t sx = t.x.samples;
  const std::uint32_t sy = t.y.samples;
  const bool average = p.reduction == RoiReduction::Average;
  for (std::int64_t oy = 0; oy < out_h; ++oy) {
    for (std::int64_t ox = 0; ox < out_w; ++ox) {
      bool first = true;
      for (std::uint32_t iy = 0; iy < sy; ++iy) {
        const auto ey = static_cast<std::size_t>(oy) * sy + iy;
        for (std::uint32_t ix = 0; ix < sx; ++ix) {
          const auto ex = static_cast<std::size_t>(ox) * sx + ix;
          if (!(t.x.inside[ex] && t.y.inside[ey])) {
            for (std::int64_t c = 0; c < channels; ++c) value[c] = p.out_of_bounds_input_value;
          } else {
            // Offsets in the tables are index * stride with stride 1 on x and W on y; scale them to pixels of C.
            const float wx = t.x.w[ex];
            const float wy = t.y.w[ey];
            const float* a = map + (t.y.i0[ey] + t.x.i0[ex]) * channels;
            const float* b = map + (t.y.i0[ey] + t.x.i1[ex]) * channels;
            const float* d0 = map + (t.y.i1[ey] + t.x.i0[ex]) * channels;
            const float* d1 = map + (t.y.i1[ey] + t.x.i1[ex]) * channels;
            if (wx == 0.0f && wy == 0.0f) {
              interpolate<false, false>(a, b, d0, d1, wx, wy, channels, value);
            } else if (wy == 0.0f) {
              interpolate<true, false>(a, b, d0, d1, wx, wy, channels, value);
            } else if (wx == 0.0f) {
              interpolate<false, true>(a, b, d0, d1, wx, wy, channels, value);
            } else {
              interpolate<true, true>(a, b, d0, d1, wx, wy, channels, value);
            }
          }
          if (first) {
            if (average) {
              for (std::int64_t c = 0; c < channels; ++c) acc[c] = 0.0f + value[c];
            } else {
              for (std::int64_t c = 0; c < channels; ++c) acc[c] = value[c];
            }
          } else if (average) {
            for (std::int64_t c = 0; c < channels; ++c) acc[c] += value[c];
          } else {
            for (std::int64_t c = 0; c < channels; ++c) acc[c] = value[c] > acc[c] ? value[c] : acc[c];
          }
          first = false;
        }
      }
      float* out = dst + (oy * out_w + ox) * channels;
      if (average) {
        for (std::int64_t c = 0; c < channels; ++c) out[c] = acc[c] / t.count;
      } else {
        for (std::int64_t c = 0; c < channels; ++c) out[c] = acc[c];
      }
    }
  }
}

// Channels [c0, c0 + count) of one batch's map as H x W x count float32 in `map` (float16 widened once here rather
// than once per tap). Columns are read in blocks so the transposed writes stay in cache.
void channels_last_copy(const ConstTensorView& input, std::int64_t batch, std::int64_t c0, std::int64_t count,
                        int threads, float* map) {
  const std::int64_t height = input.size(2);
  const std::int64_t width = input.size(3);
  constexpr std::int64_t kColumns = 64;
  parallel_for(height, 2, threads, [&](std::int64_t begin, std::int64_t end) {
    std::vector<float> row(static_cast<std::size_t>(kColumns));
    for (std::int64_t y = begin; y < end; ++y) {
      for (std::int64_t x0 = 0; x0 < width; x0 += kColumns) {
        const std::int64_t n = std::min(kColumns, width - x0);
        float* dst = map + (y * width + x0) * count;
        for (std::int64_t c = 0; c < count; ++c) {
          load_row(input.data(), input.dtype(),
                   batch * input.stride(0) + (c0 + c) * input.stride(1) + y * input.stride(2) + x0 * input.stride(3),
                   input.stride(3), n, row.data());
          for (std::int64_t x = 0; x < n; ++x) dst[x * count + c] = row[static_cast<std::size_t>(x)];
        }
      }
    }
  });
}

// Channels handled together by the channels-last path: wide enough for full SIMD vectors, small enough that the
// H x W x block scratch map stays a fraction of the input.
constexpr std::int64_t kChannelBlock = 32;

// Channels-last pays when many channels share each sample's taps and weights.
constexpr std::int64_t kChannelsLastMinChannels = 8;

}  // namespace

void roi_align_cpu(const ConstTensorView& input, const ConstTensorView& rois, const ConstTensorView& batch_indices,
                   const TensorView& output, const RoiAlignParams& p, int threads) {
  const DataType type = input.dtype();
  const std::int64_t roi_count = output.size(0);
  const std::int64_t channels = output.size(1);
  const std::int64_t out_h = output.size(2);
  const std::int64_t out_w = output.size(3);
  const std::int64_t roi_stride = rois.stride(rois.rank() - 2);
  const std::int64_t coord_stride = rois.stride(rois.rank() - 1);
  const std::int64_t index_stride = batch_indices.stride(batch_indices.rank() - 1);

  const bool channels_last = channels >= kChannelsLastMinChannels;
  // Channels-last tables index pixels of the H x W x C copy (x stride 1, y stride W, scaled by C when read).
  const std::int64_t sx_stride = channels_last ? 1 : input.stride(3);
  const std::int64_t sy_stride = channels_last ? input.size(3) : input.stride(2);
  std::vector<RoiTables> tables(static_cast<std::size_t>(roi_count));
  parallel_for(roi_count, 16, threads, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r) {
      const auto coord = [&](int j) {
        return detail::load_element(rois.data(), type, r * roi_stride + j * coord_stride);
      };
      RoiTables& t = tables[static_cast<std::size_t>(r)];
      t.batch = static_cast<const std::uint32_t*>(batch_indices.data())[r * index_stride];
      const float x1 = coord(0) * p.spatial_scale_x;
      const float y1 = coord(1) * p.spatial_scale_y;
      const float x2 = coord(2) * p.spatial_scale_x;
      const float y2 = coord(3) * p.spatial_scale_y;
      t.x = make_axis(x1, x2 - x1, out_w, input.size(3), sx_stride, p);
      t.y = make_axis(y1, y2 - y1, out_h, input.size(2), sy_stride, p);
      t.count = static_cast<float>(static_cast<std::uint64_t>(t.x.samples) * t.y.samples);
    }
  });

  if (channels_last) {
    // Per batch and block of channels: one H x W x block copy of the map, then every ROI of that batch in parallel.
    const std::int64_t block = std::min(channels, kChannelBlock);
    std::vector<float> map(static_cast<std::size_t>(input.size(2) * input.size(3) * block));
    std::vector<std::vector<std::int64_t>> by_batch(static_cast<std::size_t>(input.size(0)));
    for (std::int64_t r = 0; r < roi_count; ++r) {
      by_batch[static_cast<std::size_t>(tables[static_cast<std::size_t>(r)].batch)].push_back(r);
    }
    for (std::int64_t b = 0; b < input.size(0); ++b) {
      const std::vector<std::int64_t>& rois_of_batch = by_batch[static_cast<std::size_t>(b)];
      if (rois_of_batch.empty()) continue;
      for (std::int64_t c0 = 0; c0 < channels; c0 += block) {
        const std::int64_t count = std::min(block, channels - c0);
        channels_last_copy(input, b, c0, count, threads, map.data());
        const auto roi_total = static_cast<std::int64_t>(rois_of_batch.size());
        parallel_for(roi_total, 1, threads, [&](std::int64_t begin, std::int64_t end) {
          const auto c_count = static_cast<std::size_t>(count);
          std::vector<float> scratch(2 * c_count);
          std::vector<float> result(static_cast<std::size_t>(out_h * out_w) * c_count);
          std::vector<float> plane(static_cast<std::size_t>(out_h * out_w));
          for (std::int64_t i = begin; i < end; ++i) {
            const std::int64_t r = rois_of_batch[static_cast<std::size_t>(i)];
            pool_channels_last(tables[static_cast<std::size_t>(r)], map.data(), count, out_h, out_w, p,
                               scratch.data(), scratch.data() + c_count, result.data());
            for (std::int64_t c = 0; c < count; ++c) {
              for (std::int64_t pixel = 0; pixel < out_h * out_w; ++pixel) {
                plane[static_cast<std::size_t>(pixel)] = result[static_cast<std::size_t>(pixel * count + c)];
              }
              for (std::int64_t oy = 0; oy < out_h; ++oy) {
                store_row(output.data(), type,
                          r * output.stride(0) + (c0 + c) * output.stride(1) + oy * output.stride(2),
                          output.stride(3), out_w, plane.data() + oy * out_w);
              }
            }
          }
        });
      }
    }
    return;
  }

  const std::int64_t units = roi_count * channels;
  parallel_for(units, 1, threads, [&](std::int64_t begin, std::int64_t end) {
    std::vector<float> result(static_cast<std::size_t>(out_h * out_w));
    for (std::int64_t unit = begin; unit < end; ++unit) {
      const std::int64_t r = unit / channels;
      const std::int64_t c = unit % channels;
      const RoiTables& t = tables[static_cast<std::size_t>(r)];
      const std::int64_t plane = t.batch * input.stride(0) + c * input.stride(1);
      if (type == DataType::Float32) {
        const float* data = static_cast<const float*>(input.data());
        pool_plane(t, plane, [data](std::int64_t i) { return data[i]; }, out_h, out_w, p, result.data());
      } else {
        const std::uint16_t* data = static_cast<const std::uint16_t*>(input.data());
        pool_plane(t, plane, [data](std::int64_t i) { return float16_bits_to_float(data[i]); }, out_h, out_w, p,
                   result.data());
      }
      for (std::int64_t oy = 0; oy < out_h; ++oy) {
        for (std::int64_t ox = 0; ox < out_w; ++ox) {
          detail::store_element(output.data(), type,
                                r * output.stride(0) + c * output.stride(1) + oy * output.stride(2) +
                                    ox * output.stride(3),
                                result[static_cast<std::size_t>(oy * out_w + ox)]);
        }
      }
    }
  });
}

}  // namespace rsz::cpu
