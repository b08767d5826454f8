#include "rsz/roi_align.h"

#include <array>
#include <cmath>
#include <cstdio>
#include <string>

#include "detail/access.h"
#include "detail/coords.h"
#include "backend.h"
#include "detail/validate.h"

namespace rsz {
namespace {

constexpr const char* kOp = "roi_align";
constexpr const char* kCoordNames[4] = {"x1", "y1", "x2", "y2"};

// Number of ROIs in a {R, 4} / {1, R, 4} / {1, 1, R, 4} rois shape.
std::int64_t checked_roi_count(const Dims& rois_sizes) {
  const std::size_t rank = rois_sizes.size();
  bool ok = rank >= 2 && rank <= 4 && rois_sizes[rank - 1] == 4;
  for (std::size_t i = 0; ok && i + 2 < rank; ++i) ok = rois_sizes[i] == 1;
  if (!ok) {
    detail::fail(ErrorCode::InvalidShape, kOp,
                 "rois has sizes " + dims_to_string(rois_sizes) + "; {R, 4}, {1, R, 4} or {1, 1, R, 4} is required");
  }
  return rois_sizes[rank - 2];
}

void check_input_shape(const Dims& input_sizes) {
  if (input_sizes.size() != 4) {
    detail::fail(ErrorCode::InvalidShape, kOp,
                 "input has rank " + std::to_string(input_sizes.size()) + " (sizes " + dims_to_string(input_sizes) +
                     "); rank 4 (NCHW) is required");
  }
  for (std::int64_t s : input_sizes) {
    if (s < 1) {
      detail::fail(ErrorCode::InvalidShape, kOp,
                   "input sizes " + dims_to_string(input_sizes) + " contain " + std::to_string(s) +
                       "; every size must be >= 1");
    }
  }
}

void check_output_extent(const char* name, std::int64_t value) {
  if (value < 1) {
    detail::fail(ErrorCode::InvalidShape, kOp, std::string(name) + " = " + std::to_string(value) + " must be >= 1");
  }
}

void check_batch_indices_shape(const ConstTensorView& batch_indices, std::int64_t roi_count) {
  if (batch_indices.dtype() != DataType::UInt32) {
    detail::fail(ErrorCode::InvalidDataType, kOp,
                 std::string("batch_indices has data type ") + to_string(batch_indices.dtype()) +
                     "; uint32 is required");
  }
  const Dims& sizes = batch_indices.sizes();
  bool ok = true;
  for (std::size_t i = 0; i + 1 < sizes.size(); ++i) ok = ok && sizes[i] == 1;
  if (!ok) {
    detail::fail(ErrorCode::InvalidShape, kOp,
                 "batch_indices has sizes " + dims_to_string(sizes) +
                     "; {R}, {1, R}, {1, 1, R} or {1, 1, 1, R} is required");
  }
  if (sizes.back() != roi_count) {
    detail::fail(ErrorCode::InvalidShape, kOp,
                 "batch_indices has " + std::to_string(sizes.back()) + " entries (sizes " + dims_to_string(sizes) +
                     ") but rois has " + std::to_string(roi_count) + " rows; they must agree on R");
  }
}

// ROI r's coordinate j (x1, y1, x2, y2) times its spatial scale (§3.1).
float scaled_coord(const ConstTensorView& rois, std::int64_t r, int j, float scale) {
  return detail::load_element(rois.data(), rois.dtype(),
                              r * rois.stride(rois.rank() - 2) + j * rois.stride(rois.rank() - 1)) *
         scale;
}

void check_roi_values(const ConstTensorView& input, const ConstTensorView& rois, const ConstTensorView& batch_indices,
                      const RoiAlignParams& params) {
  const std::int64_t roi_count = rois.size(rois.rank() - 2);
  for (std::int64_t r = 0; r < roi_count; ++r) {
    const std::uint32_t b =
        static_cast<const std::uint32_t*>(batch_indices.data())[r * batch_indices.stride(batch_indices.rank() - 1)];
    std::array<float, 4> box;
    for (int j = 0; j < 4; ++j) {
      box[static_cast<std::size_t>(j)] = detail::load_element(
          rois.data(), rois.dtype(), r * rois.stride(rois.rank() - 2) + j * rois.stride(rois.rank() - 1));
    }
    detail::check_roi(r, b, box, input.size(0), params.spatial_scale_x, params.spatial_scale_y);
  }
}

// A sample total for a message: exact below ten million, else two significant digits ("6.3e+13").
std::string format_count(std::uint64_t n) {
  if (n == UINT64_MAX) return "more than 1.8e+19";
  if (n < 10000000u) return std::to_string(n);
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.2g", static_cast<double>(n));
  return buffer;
}

// roi_align's sample budget (ExecOptions::max_samples): R x C x OH x OW x sy x sx interpolated samples in total,
// with the backends' own per-ROI sample counts (§3.2, detail::roi_sample_count on the same X2 - X1 and Y2 - Y1),
// in saturating uint64 arithmetic, checked after the ROI values are validated and before any work.
void check_sample_budget(const ConstTensorView& input, const ConstTensorView& rois, const TensorView& output,
                         const RoiAlignParams& params, std::uint64_t max_samples) {
  if (max_samples == 0) return;  // no limit
  const auto channels = static_cast<std::uint64_t>(input.size(1));
  const std::int64_t out_h = output.size(2);
  const std::int64_t out_w = output.size(3);
  const std::uint64_t per_sample =
      detail::saturating_mul(channels, detail::saturating_mul(static_cast<std::uint64_t>(out_h),
                                                               static_cast<std::uint64_t>(out_w)));
  const std::int64_t roi_count = rois.size(rois.rank() - 2);
  std::uint64_t total = 0;
  std::int64_t worst = 0;
  std::uint32_t worst_sx = 0;
  std::uint32_t worst_sy = 0;
  std::uint64_t worst_samples = 0;
  for (std::int64_t r = 0; r < roi_count; ++r) {
    const float x1 = scaled_coord(rois, r, 0, params.spatial_scale_x);
    const float y1 = scaled_coord(rois, r, 1, params.spatial_scale_y);
    const float x2 = scaled_coord(rois, r, 2, params.spatial_scale_x);
    const float y2 = scaled_coord(rois, r, 3, params.spatial_scale_y);
    const std::uint32_t sx = detail::roi_sample_count(x2 - x1, out_w, params.minimum_samples_per_output,
                                                      params.maximum_samples_per_output);
    const std::uint32_t sy = detail::roi_sample_count(y2 - y1, out_h, params.minimum_samples_per_output,
                                                      params.maximum_samples_per_output);
    const std::uint64_t samples = detail::saturating_mul(detail::saturating_mul(per_sample, sx), sy);
    if (r == 0 || samples > worst_samples) {
      worst = r;
      worst_sx = sx;
      worst_sy = sy;
      worst_samples = samples;
    }
    total = total > UINT64_MAX - samples ? UINT64_MAX : total + samples;
  }
  if (total > max_samples) {
    detail::fail_sample_budget(total, max_samples, worst, worst_sy, worst_sx, out_h, out_w, channels);
  }
}

// The checks of the arguments' shapes, types and parameters (not of the output's memory, nor of the ROI values).
void validate_shapes(const ConstTensorView& input, const ConstTensorView& rois, const ConstTensorView& batch_indices,
                     const TensorView& output, const RoiAlignParams& params) {
  check_input_shape(input.sizes());
  detail::check_data_types(kOp, input.dtype(), output.dtype());
  const std::int64_t roi_count = checked_roi_count(rois.sizes());
  // The ROI coordinates have the data type of the computation: the output's (the input's, for float inputs).
  const bool unorm = input.dtype() == DataType::UNorm8 || input.dtype() == DataType::UNorm16;
  detail::check_same_type(kOp, "rois", rois.dtype(), unorm ? "the output" : "the input", output.dtype());
  check_batch_indices_shape(batch_indices, roi_count);
  detail::check_rank(kOp, "output", output.layout(), 4);
  check_output_extent("output height (output sizes[2])", output.size(2));
  check_output_extent("output width (output sizes[3])", output.size(3));
  const Dims expected{roi_count, input.size(1), output.size(2), output.size(3)};
  if (output.sizes() != expected) {
    detail::fail(ErrorCode::InvalidShape, kOp,
                 "output sizes " + dims_to_string(output.sizes()) + " do not match; {R, C, OH, OW} = " +
                     dims_to_string(expected) + " is required");
  }
  check_params(params);
}

void validate(const ConstTensorView& input, const ConstTensorView& rois, const ConstTensorView& batch_indices,
              const TensorView& output, const RoiAlignParams& params) {
  validate_shapes(input, rois, batch_indices, output, params);
  detail::check_output_writable(kOp, output, {&input, &rois, &batch_indices});
}

}  // namespace

void check_params(const RoiAlignParams& params) {
  if (params.interpolation != InterpolationMode::Nearest && params.interpolation != InterpolationMode::Linear) {
    detail::fail(ErrorCode::InvalidArgument, kOp, "interpolation has an unknown value; nearest or linear is allowed");
  }
  if (params.reduction != RoiReduction::Average && params.reduction != RoiReduction::Max) {
    detail::fail(ErrorCode::InvalidArgument, kOp, "reduction has an unknown value; average or max is allowed");
  }
  if (params.minimum_samples_per_output < 1) {
    detail::fail(ErrorCode::InvalidArgument, kOp, "minimum_samples_per_output = 0 is not allowed; it must be >= 1");
  }
  if (params.minimum_samples_per_output > params.maximum_samples_per_output) {
    detail::fail(ErrorCode::InvalidArgument, kOp,
                 "maximum_samples_per_output = " + std::to_string(params.maximum_samples_per_output) +
                     " is below minimum_samples_per_output = " + std::to_string(params.minimum_samples_per_output) +
                     "; 1 <= minimum <= maximum is required");
  }
  detail::check_finite(kOp, "spatial_scale_x", params.spatial_scale_x);
  detail::check_finite(kOp, "spatial_scale_y", params.spatial_scale_y);
  detail::check_finite(kOp, "input_pixel_offset", params.input_pixel_offset);
  detail::check_finite(kOp, "output_pixel_offset", params.output_pixel_offset);
}

void detail::check_roi(std::int64_t r, std::uint32_t batch_index, const std::array<float, 4>& box,
                       std::int64_t batch, float scale_x, float scale_y) {
  if (batch_index >= batch) {
    detail::fail(ErrorCode::InvalidArgument, kOp,
                 "batch_indices[" + std::to_string(r) + "] = " + std::to_string(batch_index) + " is out of range [0, " +
                     std::to_string(batch) + ")");
  }
  for (int j = 0; j < 4; ++j) {
    const float v = box[static_cast<std::size_t>(j)];
    const float scale = j % 2 == 0 ? scale_x : scale_y;
    if (std::isfinite(v * scale)) continue;  // v is finite too; the names below are built only for a message
    const std::string name = "rois[" + std::to_string(r) + "][" + std::to_string(j) + "] (" + kCoordNames[j] + ")";
    detail::check_finite(kOp, name, v);
    detail::fail(ErrorCode::InvalidArgument, kOp,
                 name + " = " + detail::format_float(v) + " times " +
                     (j % 2 == 0 ? "spatial_scale_x" : "spatial_scale_y") + " = " + detail::format_float(scale) +
                     " overflows float32; scaled coordinates must be finite");
  }
  // The extents RW = X2 - X1 and RH = Y2 - Y1 (§3.1) must be finite too: an infinite extent makes every sample
  // position infinite or NaN.
  for (int axis = 0; axis < 2; ++axis) {
    const float scale = axis == 0 ? scale_x : scale_y;
    const float start = box[static_cast<std::size_t>(axis)] * scale;
    const float end = box[static_cast<std::size_t>(axis + 2)] * scale;
    if (!std::isfinite(end - start)) {
      detail::fail(ErrorCode::InvalidArgument, kOp,
                   "rois[" + std::to_string(r) + "]: the scaled " + (axis == 0 ? "width X2 - X1 = " : "height Y2 - Y1 = ") +
                       detail::format_float(end) + " - " + detail::format_float(start) +
                       " overflows float32; box extents must be finite");
    }
  }
}

void detail::fail_sample_budget(std::uint64_t total, std::uint64_t max_samples, std::int64_t worst,
                                std::uint32_t worst_sy, std::uint32_t worst_sx, std::int64_t out_h, std::int64_t out_w,
                                std::uint64_t channels) {
  detail::fail(ErrorCode::InvalidArgument, kOp,
               "the ROIs need " + format_count(total) + " samples (ROI " + std::to_string(worst) + " alone: " +
                   std::to_string(out_h) + " x " + std::to_string(out_w) + " outputs x " + std::to_string(worst_sy) +
                   " x " + std::to_string(worst_sx) + " samples each per channel, " + std::to_string(channels) +
                   (channels == 1 ? " channel" : " channels") + "), over the limit of " + std::to_string(max_samples) +
                   " (ExecOptions::max_samples); lower maximum_samples_per_output or the ROI sizes");
}

void detail::check_roi_values_on_host(const ConstTensorView& input, const ConstTensorView& rois,
                                      const ConstTensorView& batch_indices, const TensorView& output,
                                      const RoiAlignParams& params, const ExecOptions& options) {
  check_roi_values(input, rois, batch_indices, params);
  if (output.element_count() == 0) return;  // R = 0: nothing to compute
  check_sample_budget(input, rois, output, params, options.max_samples);
}

const char* to_string(RoiReduction reduction) {
  switch (reduction) {
    case RoiReduction::Average: return "average";
    case RoiReduction::Max: return "max";
  }
  return "unknown";
}

Dims roi_align_output_sizes(const Dims& input_sizes, const Dims& rois_sizes, std::int64_t output_height,
                            std::int64_t output_width) {
  check_input_shape(input_sizes);
  const std::int64_t roi_count = checked_roi_count(rois_sizes);
  check_output_extent("output_height", output_height);
  check_output_extent("output_width", output_width);
  return {roi_count, input_sizes[1], output_height, output_width};
}

void check_roi_align(const ConstTensorView& input, const ConstTensorView& rois, const ConstTensorView& batch_indices,
                     DataType output_type, const Dims& output_sizes, const RoiAlignParams& params,
                     const ExecOptions& options) {
  const TensorView output(nullptr, output_type, output_sizes);  // its sizes and type only: nothing is written
  validate_shapes(input, rois, batch_indices, output, params);
  const detail::BackendOps& backend =
      detail::pick_backend(kOp, options, detail::common_memory(kOp, {&input, &rois, &batch_indices}));
  backend.check_roi_values(input, rois, batch_indices, output, params, options);
}

void roi_align(const ConstTensorView& input, const ConstTensorView& rois, const ConstTensorView& batch_indices,
               const TensorView& output, const RoiAlignParams& params, const ExecOptions& options) {
  validate(input, rois, batch_indices, output, params);
  const ConstTensorView out = output;
  const detail::BackendOps& backend =
      detail::pick_backend(kOp, options, detail::common_memory(kOp, {&input, &rois, &batch_indices, &out}));
  backend.check_roi_values(input, rois, batch_indices, output, params, options);
  if (output.element_count() == 0) return;  // R = 0: nothing to compute
  backend.roi_align(input, rois, batch_indices, output, params, options);
}

}  // namespace rsz
