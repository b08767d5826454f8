#include "rsz/resample.h"

#include <cmath>
#include <string>

#include "backend.h"
#include "detail/validate.h"

namespace rsz {
namespace {

constexpr const char* kOp = "resample";

void check_scales(const std::array<float, 4>& scales) {
  for (std::size_t i = 0; i < 4; ++i) {
    if (!std::isfinite(scales[i]) || !(scales[i] > 0.0f)) {
      detail::fail(ErrorCode::InvalidArgument, kOp,
                   "scales[" + std::to_string(i) + "] = " + detail::format_float(scales[i]) +
                       " is not allowed; each scale must be finite and > 0");
    }
  }
}

void validate(const ConstTensorView& input, const TensorView& output, const ResampleParams& params) {
  detail::check_rank(kOp, "input", input.layout(), 4);
  detail::check_rank(kOp, "output", output.layout(), 4);
  detail::check_data_types(kOp, input.dtype(), output.dtype());
  detail::check_sizes_positive(kOp, "input", input.layout());
  detail::check_sizes_positive(kOp, "output", output.layout());
  check_params(params);
  detail::check_output_writable(kOp, output, {&input});
}

}  // namespace

void check_params(const ResampleParams& params) {
  check_scales(params.scales);
  for (std::size_t i = 0; i < 4; ++i) {
    detail::check_finite(kOp, "input_pixel_offsets[" + std::to_string(i) + "]", params.input_pixel_offsets[i]);
    detail::check_finite(kOp, "output_pixel_offsets[" + std::to_string(i) + "]", params.output_pixel_offsets[i]);
  }
  if (params.interpolation != InterpolationMode::Nearest && params.interpolation != InterpolationMode::Linear) {
    detail::fail(ErrorCode::InvalidArgument, kOp, "interpolation has an unknown value; nearest or linear is allowed");
  }
  switch (params.rounding_direction) {
    case NearestRounding::RoundPreferCeil:
    case NearestRounding::RoundPreferFloor:
    case NearestRounding::Floor:
    case NearestRounding::Ceil: break;
    default:
      detail::fail(ErrorCode::InvalidArgument, kOp,
                   "rounding_direction has an unknown value; round_prefer_ceil, round_prefer_floor, floor or ceil "
                   "is allowed");
  }
}

const char* to_string(InterpolationMode mode) {
  switch (mode) {
    case InterpolationMode::Nearest: return "nearest";
    case InterpolationMode::Linear: return "linear";
  }
  return "unknown";
}

const char* to_string(NearestRounding rounding) {
  switch (rounding) {
    case NearestRounding::RoundPreferCeil: return "round_prefer_ceil";
    case NearestRounding::RoundPreferFloor: return "round_prefer_floor";
    case NearestRounding::Floor: return "floor";
    case NearestRounding::Ceil: return "ceil";
  }
  return "unknown";
}

Dims resample_output_sizes(const Dims& input_sizes, const std::array<float, 4>& scales) {
  if (input_sizes.size() != 4) {
    detail::fail(ErrorCode::InvalidShape, kOp,
                 "input has rank " + std::to_string(input_sizes.size()) + " (sizes " + dims_to_string(input_sizes) +
                     "); rank 4 is required");
  }
  check_scales(scales);
  Dims sizes(4);
  for (std::size_t i = 0; i < 4; ++i) {
    const float scaled = std::floor(static_cast<float>(input_sizes[i]) * scales[i]);
    if (!(scaled < 9.0e18f)) {
      detail::fail(ErrorCode::InvalidArgument, kOp,
                   "scales[" + std::to_string(i) + "] = " + detail::format_float(scales[i]) + " makes output size " +
                       detail::format_float(scaled) + " on axis " + std::to_string(i) +
                       "; output sizes must fit in int64");
    }
    sizes[i] = scaled < 1.0f ? 1 : static_cast<std::int64_t>(scaled);
  }
  return sizes;
}

void resample(const ConstTensorView& input, const TensorView& output, const ResampleParams& params,
              const ExecOptions& options) {
  validate(input, output, params);
  const ConstTensorView out = output;
  const detail::BackendOps& backend = detail::pick_backend(kOp, options, detail::common_memory(kOp, {&input, &out}));
  backend.resample(input, output, params, options);
}

}  // namespace rsz
