// rsz::roi_align: DirectML DML_ROI_ALIGN, plus the DML_ROI_ALIGN1 extensions, on float32/float16 tensors (and
// unorm8/unorm16 inputs, tensor.h, with a float32 or float16 output).
//
// Tensors: input {N, C, H, W}; rois {R, 4}, {1, R, 4} or {1, 1, R, 4}, rows [x1, y1, x2, y2] (x first), the output's
// data type (the input's, for a float input); batch_indices uint32 {R}, {1, R}, {1, 1, R} or {1, 1, 1, R};
// output {R, C, OH, OW}, OH, OW >= 1.
//
// For ROI r, b = batch_indices[r], every channel (float32 throughout):
//   1. X1 = x1 * spatial_scale_x, X2 = x2 * spatial_scale_x (Y likewise); RW = X2 - X1, RH = Y2 - Y1. No clamping:
//      a zero-size box samples a single point, an inverted box (x2 < x1) gives a mirrored output.
//   2. Samples per output element: sx = clamp(ceil(|RW| / OW), min, max), sy = clamp(ceil(|RH| / OH), min, max)
//      with min/max = minimum/maximum_samples_per_output.
//   3. Sample k of output column ox: X = X1 + (ox * sx + k - op) * (RW / (OW * sx)) - ip (ip, op = input/output
//      pixel offset; the defaults give the Mask R-CNN "aligned" formula). With align_regions_to_corners:
//      X = X1 + (ox * sx + k) * (RW / (OW * sx - 1)) - ip, i.e. first sample on X1, last on X2 (a single sample:
//      on X1). Rows likewise.
//   4. A sample with X < -1, X > W, Y < -1 or Y > H is out_of_bounds_input_value. Otherwise X is clamped to
//      [0, W - 1] and Y to [0, H - 1] (so [-1, 0) reads the edge) and the input is read: linear = bilinear of the 4
//      neighbours (x first, then y; upper index clamped), nearest = floor(X + 0.5), floor(Y + 0.5).
//   5. average = sum of the sx * sy samples / (sx * sy), out-of-bounds samples included;
//      max = largest of the full sample values.
// With the default offsets and align_regions_to_corners = false this is exactly DML_ROI_ALIGN.
//
// Throws rsz::Error, before writing anything, naming "roi_align", the parameter, the value and what was allowed,
// when: the input is not rank 4 of a data type above; rois or batch_indices have another shape or data type, or
// disagree on R; the output is not {R, C, OH, OW} of the input's data type (float32 or float16 for unorm); a size is 0
// (R = 0 is allowed and writes nothing); minimum_samples_per_output is 0 or above the maximum; a spatial scale or pixel
// offset is not finite; a ROI coordinate, or a scaled one, is not finite; a batch index is not below N; the output
// overlaps itself or an input.
#pragma once

#include <cstdint>
#include <limits>

#include "rsz/exec.h"
#include "rsz/resample.h"
#include "rsz/tensor.h"

// The public API: exported from a shared build, whose other symbols are hidden.
#pragma GCC visibility push(default)

namespace rsz {

enum class RoiReduction { Average, Max };

// "average", "max".
const char* to_string(RoiReduction reduction);

struct RoiAlignParams {
  RoiReduction reduction = RoiReduction::Average;
  InterpolationMode interpolation = InterpolationMode::Linear;
  float spatial_scale_x = 1.0f;
  float spatial_scale_y = 1.0f;
  float out_of_bounds_input_value = 0.0f;
  std::uint32_t minimum_samples_per_output = 1;
  std::uint32_t maximum_samples_per_output = std::numeric_limits<std::uint32_t>::max();
  float input_pixel_offset = 0.5f;
  float output_pixel_offset = -0.5f;
  bool align_regions_to_corners = false;
};

// Checks the parameter values alone, without tensors: known enum values, 1 <= minimum_samples_per_output <=
// maximum_samples_per_output, finite spatial scales and offsets. roi_align() runs this same check; front ends call it
// as they read parameters. Throws rsz::Error (InvalidArgument) naming the parameter, its value and what is allowed.
void check_params(const RoiAlignParams& params);

// {R, C, output_height, output_width} for the given input and rois sizes. Throws rsz::Error on bad shapes.
Dims roi_align_output_sizes(const Dims& input_sizes, const Dims& rois_sizes, std::int64_t output_height,
                            std::int64_t output_width);

void roi_align(const ConstTensorView& input, const ConstTensorView& rois, const ConstTensorView& batch_indices,
               const TensorView& output, const RoiAlignParams& params, const ExecOptions& options = {});

// Every check roi_align() runs before it computes (shapes, data types, parameter values, each ROI's box and batch
// index, the sample budget of options.max_samples over all the ROIs, the backend's availability), for an output of
// `output_type` and `output_sizes`, without computing or writing anything. For callers that compute the ROIs in
// groups (one roi_align call per group of rows of rois, into a smaller buffer): the whole call's checks first, so
// that bad input is refused before any group's results are used. Throws what roi_align would.
void check_roi_align(const ConstTensorView& input, const ConstTensorView& rois, const ConstTensorView& batch_indices,
                     DataType output_type, const Dims& output_sizes, const RoiAlignParams& params,
                     const ExecOptions& options = {});

}  // namespace rsz

#pragma GCC visibility pop
