// rsz::resample: DirectML DML_RESAMPLE1 on rank-4 float32/float16 tensors.
//
// For every output element and each of the 4 axes (input length n, output index o, scale s, offsets ip, op):
//   x = (o - op) / s - ip                             (float32, true division, no FMA)
//   nearest: i = clamp(floor(x + 0.5), 0, n - 1)       exact halves go up (rounding_direction: RESAMPLE2's other
//                                                       rules floor(x), ceil(x), ceil(x - 0.5))
//   linear:  x = clamp(x, 0, n - 1); i0 = floor(x); i1 = min(i0 + 1, n - 1); w = x - i0
//            the output is the tensor product of the four 2-tap filters, combined innermost axis first
//            (W, H, C, N), each step a + w * (b - a); an axis with w == 0 takes only its first tap.
// antialiased (RESAMPLE3): on each axis with scale < 1 the 2-tap filter becomes the triangle filter widened by
//            1 / scale, normalized over the taps inside the input (SEMANTICS.md §1.7).
// Edges always repeat (no extrapolation value). The scales are used as given and never recomputed from the sizes:
// where the scaled input is larger than the output the rest is not sampled, where smaller the edge repeats.
// Default offsets 0.5 / -0.5 are pixel centres (DML_RESAMPLE, ONNX half_pixel, OpenCV INTER_LINEAR).
//
// Shapes and types: input and output rank 4, any sizes >= 1, same data type (float32 or float16; or a unorm8/unorm16
// input, tensor.h, with a float32 or float16 output); the output sizes are the caller's (see resample_output_sizes).
// Strides per tensor.h; the output must not overlap the input.
// Throws rsz::Error, before writing anything, naming "resample", the parameter, the value and what was allowed,
// when: a rank is not 4; the data types differ or are not float; a size is 0; a scale is not finite and > 0;
// an offset is not finite; the output overlaps itself or the input.
#pragma once

#include <array>

#include "rsz/exec.h"
#include "rsz/tensor.h"

// The public API: exported from a shared build, whose other symbols are hidden.
#pragma GCC visibility push(default)

namespace rsz {

enum class InterpolationMode { Nearest, Linear };

// "nearest", "linear".
const char* to_string(InterpolationMode mode);

// How nearest mode turns the source coordinate x into an index (SEMANTICS.md §1.2; DML_RESAMPLE2's
// RoundingDirection, ONNX Resize's nearest_mode). Linear mode ignores it.
enum class NearestRounding {
  RoundPreferCeil,   // floor(x + 0.5): RESAMPLE1's rule, exact halves go up (the default)
  RoundPreferFloor,  // ceil(x - 0.5): exact halves go down
  Floor,             // floor(x): DML_AXIS_DIRECTION_DECREASING
  Ceil,              // ceil(x): DML_AXIS_DIRECTION_INCREASING
};

// "round_prefer_ceil", "round_prefer_floor", "floor", "ceil".
const char* to_string(NearestRounding rounding);

struct ResampleParams {
  InterpolationMode interpolation = InterpolationMode::Linear;
  std::array<float, 4> scales{1.0f, 1.0f, 1.0f, 1.0f};
  std::array<float, 4> input_pixel_offsets{0.5f, 0.5f, 0.5f, 0.5f};
  std::array<float, 4> output_pixel_offsets{-0.5f, -0.5f, -0.5f, -0.5f};
  // DML_RESAMPLE2: the nearest rounding rule (the default is RESAMPLE1's).
  NearestRounding rounding_direction = NearestRounding::RoundPreferCeil;
  // DML_RESAMPLE3 / ONNX Resize antialias=1: linear mode widens its triangle filter by 1 / scale on every axis with
  // scale < 1 (SEMANTICS.md §1.7). Nearest mode and axes with scale >= 1 are unaffected.
  bool antialiased = false;
};

// Checks the parameter values alone, without tensors: scales finite and > 0, offsets finite, known enum values.
// resample() runs this same check; front ends call it as they read parameters (a config key, a flag), so a value
// is refused before any input is read, with the rule and message written once, here. Throws rsz::Error
// (InvalidArgument) naming the parameter, its value and what is allowed.
void check_params(const ResampleParams& params);

// The default output sizes for `scales`: max(1, floor(n * s)) per axis, computed in float32.
// Throws rsz::Error when the rank is not 4 or a scale is not finite and > 0.
Dims resample_output_sizes(const Dims& input_sizes, const std::array<float, 4>& scales);

void resample(const ConstTensorView& input, const TensorView& output, const ResampleParams& params,
              const ExecOptions& options = {});

// A tall input band by band, for memory: a decoder's rows go through the filter as they come and the whole input
// never exists at once (rsz thumbnail's camera-size JPEGs). `band` holds input rows [first_row, first_row +
// band.size(2)) of an input `input_height` rows tall whose other sizes are band's. The output is what resample()
// computes from that whole input, bit for bit: the coordinates, clamps and antialias normalization use the whole
// height. The band must hold every row the output reads (resample_rows_read); output rows can be a band too, by
// shifting output_pixel_offsets[2] by the band's first output row where that is exact. Host backends only
// (Reference, Cpu; Auto picks Cpu). Throws rsz::Error as resample() does, and InvalidArgument naming both row ranges
// when the band misses a row the output reads, or when another backend is asked for.
void resample_rows(const ConstTensorView& band, std::int64_t first_row, std::int64_t input_height,
                   const TensorView& output, const ResampleParams& params, const ExecOptions& options = {});

// The input rows [first, last) that `output_rows` output rows (from row 0, as `params` place them) read from an input
// `input_height` rows tall: every row any filter tap of theirs touches. Throws as check_params.
std::array<std::int64_t, 2> resample_rows_read(std::int64_t input_height, std::int64_t output_rows,
                                               const ResampleParams& params);

}  // namespace rsz

#pragma GCC visibility pop
