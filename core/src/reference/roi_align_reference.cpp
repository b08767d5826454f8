#include <cstdint>

#include "detail/access.h"
#include "detail/coords.h"
#include "reference/plane.h"
#include "reference/reference.h"

namespace rsz::reference {
namespace {

float read_sample(const ConstTensorView& input, std::int64_t plane, float x, float y, const RoiAlignParams& params) {
  const std::int64_t height = input.size(2);
  const std::int64_t width = input.size(3);
  if (!detail::roi_sample_in_bounds(x, y, width, height)) return params.out_of_bounds_input_value;
  const float xc = detail::clamp_coord(x, width);
  const float yc = detail::clamp_coord(y, height);
  if (params.interpolation == InterpolationMode::Nearest) {
    return detail::load_element(input.data(), input.dtype(),
                                plane + detail::nearest_index(yc, height) * input.stride(2) +
                                    detail::nearest_index(xc, width) * input.stride(3));
  }
  return read_bilinear(input.data(), input.dtype(), plane, input.stride(2), input.stride(3),
                       detail::linear_taps(yc, height), detail::linear_taps(xc, width));
}

}  // namespace

void roi_align_reference(const ConstTensorView& input, const ConstTensorView& rois,
                         const ConstTensorView& batch_indices, const TensorView& output, const RoiAlignParams& params) {
  const DataType type = output.dtype();  // the input may be unorm; rois have the output's type
  const std::int64_t roi_stride = rois.stride(rois.rank() - 2);
  const std::int64_t coord_stride = rois.stride(rois.rank() - 1);
  const std::int64_t index_stride = batch_indices.stride(batch_indices.rank() - 1);
  const std::int64_t out_h = output.size(2);
  const std::int64_t out_w = output.size(3);

  for (std::int64_t r = 0; r < output.size(0); ++r) {
    const auto coord = [&](int j) {
      return detail::load_element(rois.data(), rois.dtype(), r * roi_stride + j * coord_stride);
    };
    const std::int64_t batch = static_cast<const std::uint32_t*>(batch_indices.data())[r * index_stride];
    const float x1 = coord(0) * params.spatial_scale_x;
    const float y1 = coord(1) * params.spatial_scale_y;
    const float x2 = coord(2) * params.spatial_scale_x;
    const float y2 = coord(3) * params.spatial_scale_y;
    const float roi_w = x2 - x1;
    const float roi_h = y2 - y1;
    const std::uint32_t sx = detail::roi_sample_count(roi_w, out_w, params.minimum_samples_per_output,
                                                      params.maximum_samples_per_output);
    const std::uint32_t sy = detail::roi_sample_count(roi_h, out_h, params.minimum_samples_per_output,
                                                      params.maximum_samples_per_output);
    const auto count = static_cast<float>(static_cast<std::uint64_t>(sx) * sy);

    for (std::int64_t c = 0; c < output.size(1); ++c) {
      const std::int64_t plane = batch * input.stride(0) + c * input.stride(1);
      for (std::int64_t oy = 0; oy < out_h; ++oy) {
        for (std::int64_t ox = 0; ox < out_w; ++ox) {
          float acc = 0.0f;
          bool first = true;
          for (std::uint32_t iy = 0; iy < sy; ++iy) {
            const float y = detail::roi_sample_coord(y1, roi_h, out_h, sy, oy, iy, params.input_pixel_offset,
                                                     params.output_pixel_offset, params.align_regions_to_corners);
            for (std::uint32_t ix = 0; ix < sx; ++ix) {
              const float x = detail::roi_sample_coord(x1, roi_w, out_w, sx, ox, ix, params.input_pixel_offset,
                                                       params.output_pixel_offset, params.align_regions_to_corners);
              const float v = read_sample(input, plane, x, y, params);
              if (params.reduction == RoiReduction::Average) {
                acc += v;
              } else if (first || v > acc) {
                acc = v;
              }
              first = false;
            }
          }
          const float value = params.reduction == RoiReduction::Average ? acc / count : acc;
          detail::store_computed(output.data(), type,
                                r * output.stride(0) + c * output.stride(1) + oy * output.stride(2) +
                                    ox * output.stride(3),
                                value);
        }
      }
    }
  }
}

}  // namespace rsz::reference
