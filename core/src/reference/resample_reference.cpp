#include <array>
#include <cstdint>
#include <vector>

#include "detail/access.h"
#include "detail/coords.h"
#include "reference/reference.h"

namespace rsz::reference {
namespace {

struct AxisSample {
  detail::LinearTaps taps;
  std::int64_t stride;
  bool antialiased = false;    // §1.7: a weighted sum over `weights` from index `first` instead of the 2-tap lerp
  std::int64_t first = 0;
  std::vector<float> weights;
};

// Tensor product of the per-axis filters, combined innermost axis first: the recursion finishes the W
// lerps (or antialiased sums) before the H ones, and so on outwards.
float combine_linear(const void* data, DataType type, const std::array<AxisSample, 4>& axes, int axis,
                     std::int64_t offset) {
  if (axis == 4) return detail::load_element(data, type, offset);
  const AxisSample& s = axes[static_cast<std::size_t>(axis)];
  if (s.antialiased) {
    float acc = 0.0f;
    for (std::size_t k = 0; k < s.weights.size(); ++k) {
      const float v = combine_linear(data, type, axes, axis + 1,
                                     offset + (s.first + static_cast<std::int64_t>(k)) * s.stride);
      acc = k == 0 ? s.weights[0] * v : detail::weighted_tap(acc, s.weights[k], v);
    }
    return acc;
  }
  const float a = combine_linear(data, type, axes, axis + 1, offset + s.taps.i0 * s.stride);
  if (s.taps.w == 0.0f) return a;
  const float b = combine_linear(data, type, axes, axis + 1, offset + s.taps.i1 * s.stride);
  return detail::lerp(a, b, s.taps.w);
}

}  // namespace

void resample_reference(const ConstTensorView& input, const TensorView& output, const ResampleParams& params,
                        const detail::RowWindow& rows) {
  const DataType type = input.dtype();
  const std::array<std::int64_t, 4> lengths{input.size(0), input.size(1), rows.rows(input), input.size(3)};
  const std::int64_t base = rows.base(input);
  std::array<std::int64_t, 4> o{};
  std::array<AxisSample, 4> axes{};  // every field used is set per element; kept to reuse the weight vectors
  for (o[0] = 0; o[0] < output.size(0); ++o[0]) {
    for (o[1] = 0; o[1] < output.size(1); ++o[1]) {
      for (o[2] = 0; o[2] < output.size(2); ++o[2]) {
        for (o[3] = 0; o[3] < output.size(3); ++o[3]) {
          std::int64_t out_offset = 0;
          std::int64_t in_offset = base;
          for (int a = 0; a < 4; ++a) {
            const auto i = static_cast<std::size_t>(a);
            out_offset += o[i] * output.stride(a);
            const float x = detail::resample_source_coord(o[i], params.scales[i], params.input_pixel_offsets[i],
                                                          params.output_pixel_offsets[i]);
            if (params.interpolation == InterpolationMode::Nearest) {
              in_offset += detail::nearest_index(x, lengths[i], params.rounding_direction) * input.stride(a);
            } else if (params.antialiased && params.scales[i] < 1.0f) {
              axes[i].antialiased = true;
              axes[i].stride = input.stride(a);
              axes[i].first = detail::antialias_taps(x, lengths[i], params.scales[i], axes[i].weights);
            } else {
              axes[i].antialiased = false;
              axes[i].taps = detail::linear_taps(x, lengths[i]);
              axes[i].stride = input.stride(a);
            }
          }
          if (params.interpolation == InterpolationMode::Nearest) {
            detail::copy_element(input.data(), type, in_offset, output.data(), output.dtype(), out_offset);
          } else {
            detail::store_computed(output.data(), output.dtype(), out_offset,
                                  combine_linear(input.data(), type, axes, 0, base));
          }
        }
      }
    }
  }
}

}  // namespace rsz::reference
