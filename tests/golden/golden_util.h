// Runs an operator on small packed float32 tensors with every backend and returns the output values.
#pragma once

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "rsz/resample.h"
#include "rsz/roi_align.h"
#include "rsz/upsample2d.h"
#include "support/test_util.h"

namespace rsz::test {

inline const std::vector<Backend>& all_backends() {
  static const std::vector<Backend> backends{Backend::Reference, Backend::Cpu, Backend::Auto};
  return backends;
}

inline std::string backend_name(const ::testing::TestParamInfo<Backend>& info) { return to_string(info.param); }

inline std::vector<float> run_resample(const Tensor& input, const Dims& out_sizes, const ResampleParams& params,
                                       Backend backend) {
  Tensor out(DataType::Float32, out_sizes);
  resample(input.const_view(), out.view(), params, {backend, 1});
  return to_vector(out.const_view());
}

inline std::vector<float> run_upsample2d(const Tensor& input, const Upsample2dParams& params, Backend backend) {
  Tensor out(DataType::Float32, upsample2d_output_sizes(input.sizes(), params.scale_size));
  upsample2d(input.const_view(), out.view(), params, {backend, 1});
  return to_vector(out.const_view());
}

inline std::vector<float> run_roi_align(const Tensor& input, const Tensor& rois, const Tensor& batch_indices,
                                        std::int64_t out_h, std::int64_t out_w, const RoiAlignParams& params,
                                        Backend backend) {
  Tensor out(DataType::Float32, roi_align_output_sizes(input.sizes(), rois.sizes(), out_h, out_w));
  roi_align(input.const_view(), rois.const_view(), batch_indices.const_view(), out.view(), params, {backend, 1});
  return to_vector(out.const_view());
}

}  // namespace rsz::test
