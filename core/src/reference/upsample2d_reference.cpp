#include <cstdint>
#include <vector>

#include "detail/access.h"
#include "detail/coords.h"
#include "reference/plane.h"
#include "reference/reference.h"

namespace rsz::reference {

void upsample2d_reference(const ConstTensorView& input, const TensorView& output, const Upsample2dParams& params) {
  const DataType type = input.dtype();
  const DataType out_type = output.dtype();  // a unorm input gives a float output
  const int rank = input.rank();
  const int h_axis = rank - 2;
  const int w_axis = rank - 1;
  const std::int64_t in_h = input.size(h_axis);
  const std::int64_t in_w = input.size(w_axis);
  const std::int64_t sh = params.scale_size.height;
  const std::int64_t sw = params.scale_size.width;

  // Walk every output element: the leading axes (N, C and, for rank 5, D) pick a plane, never blended.
  std::vector<std::int64_t> index(static_cast<std::size_t>(rank), 0);
  const std::int64_t total = output.element_count();
  for (std::int64_t flat = 0; flat < total; ++flat) {
    std::int64_t rest = flat;
    for (int a = rank - 1; a >= 0; --a) {
      index[static_cast<std::size_t>(a)] = rest % output.size(a);
      rest /= output.size(a);
    }
    std::int64_t plane_in = 0;
    std::int64_t out_offset = 0;
    for (int a = 0; a < rank; ++a) {
      const std::int64_t i = index[static_cast<std::size_t>(a)];
      out_offset += i * output.stride(a);
      if (a < h_axis) plane_in += i * input.stride(a);
    }
    const std::int64_t oh = index[static_cast<std::size_t>(h_axis)];
    const std::int64_t ow = index[static_cast<std::size_t>(w_axis)];
    if (params.interpolation == InterpolationMode::Nearest) {
      detail::copy_element(input.data(), type,
                           plane_in + (oh / sh) * input.stride(h_axis) + (ow / sw) * input.stride(w_axis),
                           output.data(), out_type, out_offset);
    } else {
      // RESAMPLE1 linear with scales {1, 1, sh, sw} and offsets 0.5 / -0.5 (the N/C axes land on whole indices).
      const auto ty = detail::linear_taps(detail::resample_source_coord(oh, static_cast<float>(sh), 0.5f, -0.5f), in_h);
      const auto tx = detail::linear_taps(detail::resample_source_coord(ow, static_cast<float>(sw), 0.5f, -0.5f), in_w);
      detail::store_computed(output.data(), out_type, out_offset,
                            read_bilinear(input.data(), type, plane_in, input.stride(h_axis), input.stride(w_axis), ty, tx));
    }
  }
}

}  // namespace rsz::reference
