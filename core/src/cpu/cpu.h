// The optimized CPU backend: per-axis and per-ROI tables computed once and shared by all channels, separable
// passes, dedicated integer-factor upsample kernels, threads over independent outputs. It evaluates exactly the
// expressions of the reference twins (detail/coords.h), in the same order, so its results are bit-identical to
// them for every data type and thread count. Inputs are trusted (validated by the entry points).
#pragma once

#include "rsz/resample.h"
#include "rsz/roi_align.h"
#include "rsz/upsample2d.h"
#include "detail/row_window.h"

namespace rsz::cpu {

// `rows`: the input is a band of a taller one (rsz::resample_rows).
void resample_cpu(const ConstTensorView& input, const TensorView& output, const ResampleParams& params, int threads,
                  const detail::RowWindow& rows = {});
// resample_cpu's linear mode with params.antialiased and a scale < 1 (SEMANTICS.md §1.7), with resample_cpu's table
// of vector kernels.
struct SimdKernels;
void resample_antialiased_cpu(const SimdKernels& vec, const ConstTensorView& input, const TensorView& output,
                              const ResampleParams& params, int threads, const detail::RowWindow& rows);
void upsample2d_cpu(const ConstTensorView& input, const TensorView& output, const Upsample2dParams& params,
                    int threads);
void roi_align_cpu(const ConstTensorView& input, const ConstTensorView& rois, const ConstTensorView& batch_indices,
                   const TensorView& output, const RoiAlignParams& params, int threads);

}  // namespace rsz::cpu
