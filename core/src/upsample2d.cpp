#include "rsz/upsample2d.h"

#include <limits>
#include <string>

#include "backend.h"
#include "detail/validate.h"

namespace rsz {
namespace {

constexpr const char* kOp = "upsample2d";

void check_input_rank(const Dims& sizes) {
  if (sizes.size() != 4 && sizes.size() != 5) {
    detail::fail(ErrorCode::InvalidShape, kOp,
                 "input has rank " + std::to_string(sizes.size()) + " (sizes " + dims_to_string(sizes) +
                     "); rank 4 (NCHW) or 5 (NCDHW) is required");
  }
}

// A scale is >= 1 and, given an input size (0: none yet), at most UINT32_MAX / that size.
void check_scale(const char* name, std::uint32_t scale, std::int64_t input_size, const char* axis) {
  if (scale < 1) detail::fail(ErrorCode::InvalidArgument, kOp, std::string(name) + " = 0 is not allowed; it must be >= 1");
  if (input_size < 1) return;
  const std::int64_t limit = static_cast<std::int64_t>(std::numeric_limits<std::uint32_t>::max()) / input_size;
  if (scale > limit) {
    detail::fail(ErrorCode::InvalidArgument, kOp,
                 std::string(name) + " = " + std::to_string(scale) + " is out of range [1, " + std::to_string(limit) +
                     "] for input " + axis + " " + std::to_string(input_size) +
                     " (the scale must be >= 1 and at most UINT32_MAX / input size)");
  }
}

Dims checked_output_sizes(const Dims& input_sizes, const ScaleSize& scale_size) {
  const int rank = static_cast<int>(input_sizes.size());
  const auto h = static_cast<std::size_t>(rank - 2);
  const auto w = static_cast<std::size_t>(rank - 1);
  check_scale("scale_size.height", scale_size.height, input_sizes[h], "height");
  check_scale("scale_size.width", scale_size.width, input_sizes[w], "width");
  Dims sizes = input_sizes;
  sizes[h] *= scale_size.height;
  sizes[w] *= scale_size.width;
  return sizes;
}

void validate(const ConstTensorView& input, const TensorView& output, const Upsample2dParams& params) {
  check_input_rank(input.sizes());
  detail::check_rank(kOp, "output", output.layout(), input.rank());
  detail::check_data_types(kOp, input.dtype(), output.dtype());
  detail::check_sizes_positive(kOp, "input", input.layout());
  check_params(params);
  const Dims expected = checked_output_sizes(input.sizes(), params.scale_size);
  if (output.sizes() != expected) {
    detail::fail(ErrorCode::InvalidShape, kOp,
                 "output sizes " + dims_to_string(output.sizes()) + " do not match; " + dims_to_string(expected) +
                     " (the input sizes with H and W times scale_size) is required");
  }
  detail::check_output_writable(kOp, output, {&input});
}

}  // namespace

void check_params(const Upsample2dParams& params) {
  if (params.interpolation != InterpolationMode::Nearest && params.interpolation != InterpolationMode::Linear) {
    detail::fail(ErrorCode::InvalidArgument, kOp, "interpolation has an unknown value; nearest or linear is allowed");
  }
  check_scale("scale_size.height", params.scale_size.height, 0, "height");
  check_scale("scale_size.width", params.scale_size.width, 0, "width");
}

Dims upsample2d_output_sizes(const Dims& input_sizes, const ScaleSize& scale_size) {
  check_input_rank(input_sizes);
  for (std::int64_t s : input_sizes) {
    if (s < 1) {
      detail::fail(ErrorCode::InvalidShape, kOp,
                   "input sizes " + dims_to_string(input_sizes) + " contain " + std::to_string(s) +
                       "; every size must be >= 1");
    }
  }
  return checked_output_sizes(input_sizes, scale_size);
}

void upsample2d(const ConstTensorView& input, const TensorView& output, const Upsample2dParams& params,
                const ExecOptions& options) {
  validate(input, output, params);
  const ConstTensorView out = output;
  const detail::BackendOps& backend = detail::pick_backend(kOp, options, detail::common_memory(kOp, {&input, &out}));
  backend.upsample2d(input, output, params, options);
}

}  // namespace rsz
