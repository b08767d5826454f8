// The naive twins: one output element at a time, no tables, threads or SIMD. They are the oracle every other
// backend is tested against, and trust their inputs (the public entry points validate first).
#pragma once

#include "rsz/resample.h"
#include "rsz/roi_align.h"
#include "rsz/upsample2d.h"
#include "detail/row_window.h"

namespace rsz::reference {

// `rows`: the input is a band of a taller one (rsz::resample_rows).
void resample_reference(const ConstTensorView& input, const TensorView& output, const ResampleParams& params,
                        const detail::RowWindow& rows = {});
void upsample2d_reference(const ConstTensorView& input, const TensorView& output, const Upsample2dParams& params);
void roi_align_reference(const ConstTensorView& input, const ConstTensorView& rois,
                         const ConstTensorView& batch_indices, const TensorView& output, const RoiAlignParams& params);

}  // namespace rsz::reference
