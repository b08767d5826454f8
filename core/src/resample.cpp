#include "rsz/resample.h"

#include <cmath>
#include <string>
#include <vector>

#include "backend.h"
#include "cpu/cpu.h"
#include "cpu/threads.h"
#include "detail/coords.h"
#include "reference/reference.h"
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

std::array<std::int64_t, 2> resample_rows_read(std::int64_t input_height, std::int64_t output_rows,
                                               const ResampleParams& params) {
  check_params(params);
  if (input_height < 1 || output_rows < 1) {
    detail::fail(ErrorCode::InvalidArgument, kOp,
                 "input height " + std::to_string(input_height) + " and output rows " + std::to_string(output_rows) +
                     " are not allowed; both must be >= 1");
  }
  // x grows with the output row (every step of resample_source_coord is monotonic), so the first output row reads
  // the lowest rows and the last one the highest.
  const float scale = params.scales[2];
  const auto source = [&](std::int64_t o) {
    return detail::resample_source_coord(o, scale, params.input_pixel_offsets[2], params.output_pixel_offsets[2]);
  };
  const float x0 = source(0);
  const float x1 = source(output_rows - 1);
  if (params.interpolation == InterpolationMode::Nearest) {
    return {detail::nearest_index(x0, input_height, params.rounding_direction),
            detail::nearest_index(x1, input_height, params.rounding_direction) + 1};
  }
  if (params.antialiased && scale < 1.0f) {
    std::vector<float> weights;
    const std::int64_t first = detail::antialias_taps(x0, input_height, scale, weights);
    const std::int64_t last = detail::antialias_taps(x1, input_height, scale, weights);
    return {first, last + static_cast<std::int64_t>(weights.size())};
  }
  return {detail::linear_taps(x0, input_height).i0, detail::linear_taps(x1, input_height).i1 + 1};
}

void resample_rows(const ConstTensorView& band, std::int64_t first_row, std::int64_t input_height,
                   const TensorView& output, const ResampleParams& params, const ExecOptions& options) {
  validate(band, output, params);
  if (first_row < 0 || input_height - first_row < band.size(2)) {
    detail::fail(ErrorCode::InvalidArgument, kOp,
                 "a band of " + std::to_string(band.size(2)) + " rows from row " + std::to_string(first_row) +
                     " is not within an input of " + std::to_string(input_height) + " rows");
  }
  const std::array<std::int64_t, 2> read = resample_rows_read(input_height, output.size(2), params);
  if (read[0] < first_row || read[1] > first_row + band.size(2)) {
    detail::fail(ErrorCode::InvalidArgument, kOp,
                 "the output reads input rows [" + std::to_string(read[0]) + ", " + std::to_string(read[1]) +
                     ") and the band holds rows [" + std::to_string(first_row) + ", " +
                     std::to_string(first_row + band.size(2)) + ")");
  }
  const ConstTensorView out = output;
  const detail::BackendOps& backend = detail::pick_backend(kOp, options, detail::common_memory(kOp, {&band, &out}));
  const detail::RowWindow rows{first_row, input_height};
  switch (backend.id) {
    case Backend::Reference: reference::resample_reference(band, output, params, rows); return;
    case Backend::Cpu:
      cpu::resample_cpu(band, output, params,
                        cpu::threads_for(options.num_threads, band.element_count() + output.element_count()), rows);
      return;
    default:
      detail::fail(ErrorCode::InvalidArgument, kOp,
                   std::string("resample_rows runs on the host backends (reference, cpu); ") + to_string(backend.id) +
                       " was asked for");
  }
}

}  // namespace rsz
