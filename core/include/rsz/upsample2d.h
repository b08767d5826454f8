// rsz::upsample2d: DirectML DML_UPSAMPLE_2D on rank-4 (NCHW) or rank-5 (NCDHW) float32/float16 tensors (and
// unorm8/unorm16 inputs, tensor.h, with a float32 or float16 output).
//
// The output keeps N, C (and D) and has H * scale_size.height rows and W * scale_size.width columns.
//   nearest: out[..., h, w] = in[..., h / sh, w / sw]  (integer division: pure replication)
//   linear:  bilinear over H and W only, exactly rsz::resample linear with scales {1, 1, sh, sw} and offsets
//            0.5 / -0.5; batch, channel and depth are never blended.
// Throws rsz::Error, before writing anything, naming "upsample2d", the parameter, the value and what was allowed,
// when: the input rank is not 4 or 5; the output rank or data type differs from the input's; the data type is not
// float; a size is 0; a scale is 0 or larger than UINT32_MAX / input size on its axis; the output sizes are not the
// input sizes times the scales; the output overlaps itself or the input.
#pragma once

#include <cstdint>

#include "rsz/exec.h"
#include "rsz/resample.h"
#include "rsz/tensor.h"

// The public API: exported from a shared build, whose other symbols are hidden.
#pragma GCC visibility push(default)

namespace rsz {

struct ScaleSize {
  std::uint32_t height = 1;
  std::uint32_t width = 1;
};

struct Upsample2dParams {
  InterpolationMode interpolation = InterpolationMode::Nearest;
  ScaleSize scale_size{};
};

// Checks the parameter values alone, without tensors: a known interpolation, scale_size.height and .width >= 1 (their
// upper bound, UINT32_MAX / the input size, needs the input: upsample2d_output_sizes). upsample2d() runs this same
// check; front ends call it as they read parameters. Throws rsz::Error (InvalidArgument) naming the parameter.
void check_params(const Upsample2dParams& params);

// Input sizes with H and W (the last two axes) multiplied by the scales. Throws rsz::Error on a bad rank or scale.
Dims upsample2d_output_sizes(const Dims& input_sizes, const ScaleSize& scale_size);

void upsample2d(const ConstTensorView& input, const TensorView& output, const Upsample2dParams& params,
                const ExecOptions& options = {});

}  // namespace rsz

#pragma GCC visibility pop
