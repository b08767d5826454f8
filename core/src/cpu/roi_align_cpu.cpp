// ROI_ALIGN on the CPU. Per ROI, the sample positions of every output column and row are computed once (the
// out-of-bounds test, the clamped taps and weights) and shared by all channels; each (ROI, channel) pair is an
// independent unit of work. Samples are read, combined and accumulated exactly as in the reference.
#include <vector>

#include "cpu/cpu.h"
#include "cpu/parallel.h"
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
      t.x = make_axis(x1, x2 - x1, out_w, input.size(3), input.stride(3), p);
      t.y = make_axis(y1, y2 - y1, out_h, input.size(2), input.stride(2), p);
      t.count = static_cast<float>(static_cast<std::uint64_t>(t.x.samples) * t.y.samples);
    }
  });

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
