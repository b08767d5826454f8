// SEMANTICS.md §0 + §5: float16 in and out is float32 arithmetic on the widened values, rounded once; every float16
// result is within 1 float16 ulp of the float32 result (on the same float16-quantized inputs) rounded to float16.
#include <gtest/gtest.h>

#include "golden/golden_util.h"

namespace rsz {
namespace {

// Rounds a float32 tensor to float16-representable values so both runs see the same inputs.
Tensor quantized(const Tensor& t) {
  return test::convert(test::convert(t.const_view(), DataType::Float16).const_view(), DataType::Float32);
}

void expect_within_one_ulp(const std::vector<float>& f32, const Tensor& f16_out, const std::string& context) {
  const auto got = test::to_vector(f16_out.const_view());
  ASSERT_EQ(got.size(), f32.size());
  for (std::size_t i = 0; i < f32.size(); ++i) {
    const float rounded = float16_bits_to_float(float_to_float16_bits(f32[i]));
    ASSERT_LE(test::float16_ulp_distance(rounded, got[i]), 1)
        << context << " at " << i << ": float32 " << f32[i] << " float16 " << got[i];
  }
}

TEST(Float16Results, Resample) {
  const Tensor in = quantized(test::random_f32({1, 3, 9, 13}, 500, -4.0f, 4.0f));
  const Tensor in16 = test::convert(in.const_view(), DataType::Float16);
  for (const auto mode : {InterpolationMode::Nearest, InterpolationMode::Linear}) {
    ResampleParams p;
    p.interpolation = mode;
    p.scales = {1, 1, 1.7f, 0.6f};
    const Dims out_sizes = resample_output_sizes(in.sizes(), p.scales);
    Tensor out16(DataType::Float16, out_sizes);
    resample(in16.const_view(), out16.view(), p);
    const auto f32 = test::run_resample(in, out_sizes, p, Backend::Reference);
    if (mode == InterpolationMode::Nearest) {
      EXPECT_TRUE(test::bits_equal(f32, test::to_vector(out16.const_view()), "nearest copies float16 exactly"));
    }
    expect_within_one_ulp(f32, out16, to_string(mode));
  }
}

TEST(Float16Results, Upsample2d) {
  const Tensor in = quantized(test::random_f32({1, 2, 2, 5, 6}, 501, -4.0f, 4.0f));
  const Tensor in16 = test::convert(in.const_view(), DataType::Float16);
  for (const auto mode : {InterpolationMode::Nearest, InterpolationMode::Linear}) {
    const Upsample2dParams p{mode, {3, 2}};
    Tensor out16(DataType::Float16, upsample2d_output_sizes(in.sizes(), p.scale_size));
    upsample2d(in16.const_view(), out16.view(), p);
    expect_within_one_ulp(test::run_upsample2d(in, p, Backend::Reference), out16, to_string(mode));
  }
}

TEST(Float16Results, RoiAlign) {
  const Tensor in = quantized(test::random_f32({2, 3, 8, 10}, 502, -4.0f, 4.0f));
  const Tensor in16 = test::convert(in.const_view(), DataType::Float16);
  const Tensor rois = quantized(test::make_f32({3, 4}, {0.5f, 1.25f, 7.5f, 6.0f, -1.5f, 2, 3, 9, 9.5f, 7, 2, 0.25f}));
  const Tensor rois16 = test::convert(rois.const_view(), DataType::Float16);
  const Tensor batch = test::make_u32({3}, {1, 0, 1});
  for (const auto mode : {InterpolationMode::Nearest, InterpolationMode::Linear}) {
    for (const auto reduction : {RoiReduction::Average, RoiReduction::Max}) {
      RoiAlignParams p;
      p.interpolation = mode;
      p.reduction = reduction;
      Tensor out16(DataType::Float16, {3, 3, 4, 5});
      roi_align(in16.const_view(), rois16.const_view(), batch.const_view(), out16.view(), p);
      expect_within_one_ulp(test::run_roi_align(in, rois, batch, 4, 5, p, Backend::Reference), out16,
                            std::string(to_string(mode)) + " " + to_string(reduction));
    }
  }
}

}  // namespace
}  // namespace rsz
