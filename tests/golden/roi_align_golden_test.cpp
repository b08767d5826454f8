// ROI_ALIGN goldens: hand derivations of SEMANTICS.md §3 with the arithmetic shown. Defaults: ip = 0.5,
// op = -0.5, so sample k of output o sits at X = X1 + (o * s + k + 0.5) * (RW / (OW * s)) - 0.5.
#include <gtest/gtest.h>

#include "golden/golden_util.h"

namespace rsz {
namespace {

using test::run_roi_align;

class RoiAlignGolden : public ::testing::TestWithParam<Backend> {
 protected:
  // 4x4 map, value = 4y + x: bilinear reads it exactly.
  const Tensor grid_ = test::iota_f32({1, 1, 4, 4});
  // One row, value = 10x.
  const Tensor row_ = test::make_f32({1, 1, 1, 5}, {0, 10, 20, 30, 40});
  const Tensor batch0_ = test::make_u32({1}, {0});
};

// §3.2 + §3.3 + §3.5: box [0, 0, 4, 4], 2x2 output, sx = sy = ceil(4 / 2) = 2, X = 2 ox + k, Y = 2 oy + k: each
// output averages a 2x2 block of pixels: (0 + 1 + 4 + 5) / 4 = 2.5, (2 + 3 + 6 + 7) / 4 = 4.5, 10.5, 12.5.
TEST_P(RoiAlignGolden, AverageOfBlocks) {
  const Tensor rois = test::make_f32({1, 4}, {0, 0, 4, 4});
  EXPECT_EQ(run_roi_align(grid_, rois, batch0_, 2, 2, {}, GetParam()), (std::vector<float>{2.5, 4.5, 10.5, 12.5}));
}

// §3.1 inverted box [4, 0, 0, 4]: RW = -4, sx = ceil(|-4| / 2) = 2, X = 4 + (2 ox + k + 0.5) * (-1) - 0.5 =
// 3 - 2 ox - k: ox = 0 reads columns {3, 2}, ox = 1 reads {1, 0}: the columns come out mirrored.
TEST_P(RoiAlignGolden, InvertedBoxMirrors) {
  const Tensor rois = test::make_f32({1, 4}, {4, 0, 0, 4});
  EXPECT_EQ(run_roi_align(grid_, rois, batch0_, 2, 2, {}, GetParam()), (std::vector<float>{4.5, 2.5, 12.5, 10.5}));
}

// §3.1 zero-size box [1.5, 1.5, 1.5, 1.5]: RW = RH = 0, one sample (the minimum), X = 1.5 + (...) * 0 - 0.5 = 1 for
// every output: all four outputs read pixel (1, 1) = 5.
TEST_P(RoiAlignGolden, ZeroSizeBoxSamplesOnePoint) {
  const Tensor rois = test::make_f32({1, 4}, {1.5, 1.5, 1.5, 1.5});
  EXPECT_EQ(run_roi_align(grid_, rois, batch0_, 2, 2, {}, GetParam()), (std::vector<float>{5, 5, 5, 5}));
}

// §3.4: zero-size boxes at x1 put one sample at X = x1 - 0.5 (Y = 0.5 - 0.5 = 0), out_of_bounds_input_value -7:
//   x1 = -0.25 -> X = -0.75, in [-1, 0): clamps to the edge -> 0 (not the out-of-bounds value, no blending)
//   x1 = -0.5  -> X = -1: still in bounds -> 0
//   x1 = -0.75 -> X = -1.25 < -1 -> -7
//   x1 = 1.25  -> X = 0.75 -> 0 + 0.75 * 10 = 7.5
//   x1 = 4.25  -> X = 3.75 -> 30 + 0.75 * (40 - 30) = 37.5
//   x1 = 5.25  -> X = 4.75 in (W - 1, W]: clamps to 4 -> 40
//   x1 = 5.5   -> X = 5 = W: still in bounds -> 40
//   x1 = 5.75  -> X = 5.25 > W -> -7
TEST_P(RoiAlignGolden, EdgeBandClampsAndBeyondIsOutOfBounds) {
  const std::vector<float> xs{-0.25f, -0.5f, -0.75f, 1.25f, 4.25f, 5.25f, 5.5f, 5.75f};
  std::vector<float> boxes;
  for (float x : xs) boxes.insert(boxes.end(), {x, 0.5f, x, 0.5f});
  const auto r = static_cast<std::int64_t>(xs.size());
  const Tensor rois = test::make_f32({r, 4}, boxes);
  const Tensor batch = test::make_u32({r}, std::vector<std::uint32_t>(xs.size(), 0));
  RoiAlignParams p;
  p.out_of_bounds_input_value = -7.0f;
  EXPECT_EQ(run_roi_align(row_, rois, batch, 1, 1, p, GetParam()),
            (std::vector<float>{0, 0, -7, 7.5, 37.5, 40, 40, -7}));
  // Rows likewise: y1 = -0.75 puts Y = -1.25 above the map.
  const Tensor above = test::make_f32({1, 4}, {1.25f, -0.75f, 1.25f, -0.75f});
  EXPECT_EQ(run_roi_align(row_, above, batch0_, 1, 1, p, GetParam()), (std::vector<float>{-7}));
}

// §3.5 average includes out-of-bounds samples; max is over them too. Box [-2, 0.5, 2, 0.5], 1x1 output:
// sx = ceil(4 / 1) = 4, X = -2 + (k + 0.5) - 0.5 = -2, -1, 0, 1 -> -7 (out), 0 (edge), 0, 10.
// average = (-7 + 0 + 0 + 10) / 4 = 0.75; max = 10; with out_of_bounds_input_value 100, max = 100.
TEST_P(RoiAlignGolden, ReductionsIncludeOutOfBoundsSamples) {
  const Tensor rois = test::make_f32({1, 4}, {-2, 0.5, 2, 0.5});
  RoiAlignParams p;
  p.out_of_bounds_input_value = -7.0f;
  EXPECT_EQ(run_roi_align(row_, rois, batch0_, 1, 1, p, GetParam()), (std::vector<float>{0.75}));
  p.reduction = RoiReduction::Max;
  EXPECT_EQ(run_roi_align(row_, rois, batch0_, 1, 1, p, GetParam()), (std::vector<float>{10}));
  p.out_of_bounds_input_value = 100.0f;
  EXPECT_EQ(run_roi_align(row_, rois, batch0_, 1, 1, p, GetParam()), (std::vector<float>{100}));
}

// §3.5 max is the maximum of the full interpolated samples (not ONNX Runtime CPU's maximum of weighted corners).
// Map {{0, 10}, {20, 30}} is 10x + 20y. Box [0.5, 0.5, 1.5, 1.5], 1x1, min = max = 2 samples:
// X, Y = 0.5 + (k + 0.5) * 0.5 - 0.5 = 0.25, 0.75 -> samples 7.5, 12.5, 17.5, 22.5: max 22.5, average 15.
// (The weighted-corner rule would give 0.75 * 0.75 * 30 = 16.875.)
TEST_P(RoiAlignGolden, MaxTakesFullSampleValues) {
  const Tensor in = test::make_f32({1, 1, 2, 2}, {0, 10, 20, 30});
  const Tensor rois = test::make_f32({1, 4}, {0.5, 0.5, 1.5, 1.5});
  RoiAlignParams p;
  p.minimum_samples_per_output = 2;
  p.maximum_samples_per_output = 2;
  p.reduction = RoiReduction::Max;
  EXPECT_EQ(run_roi_align(in, rois, batch0_, 1, 1, p, GetParam()), (std::vector<float>{22.5}));
  p.reduction = RoiReduction::Average;
  EXPECT_EQ(run_roi_align(in, rois, batch0_, 1, 1, p, GetParam()), (std::vector<float>{15}));
  // SEMANTICS.md §7: the max starts from the first sample, not from 0: the same map negated gives -7.5.
  const Tensor negative = test::make_f32({1, 1, 2, 2}, {0, -10, -20, -30});
  p.reduction = RoiReduction::Max;
  EXPECT_EQ(run_roi_align(negative, rois, batch0_, 1, 1, p, GetParam()), (std::vector<float>{-7.5}));
}

// §3.2 sample count = clamp(ceil(|RW| / OW), min, max). Nearest on row 10x, box [0, 0, 5, 0], OW = 2:
// sx = ceil(5 / 2) = 3, step = 5 / 6: X = (k + 0.5) * 5/6 - 0.5 = -0.083, 0.75, 1.583 -> pixels 0, 1, 2 -> 10;
// ox = 1: 2.417, 3.25, 4.083 -> pixels 2, 3, 4 -> 30. (floor(5 / 2) = 2 samples would give 5 and 30.)
TEST_P(RoiAlignGolden, SampleCountIsCeiling) {
  const Tensor rois = test::make_f32({1, 4}, {0, 0, 5, 0});
  RoiAlignParams p;
  p.interpolation = InterpolationMode::Nearest;
  EXPECT_EQ(run_roi_align(row_, rois, batch0_, 1, 2, p, GetParam()), (std::vector<float>{10, 30}));
}

// §3.2 clamping of the count, linear, same box. max = 1: one sample per output at X = (ox + 0.5) * 2.5 - 0.5 =
// 0.75, 3.25 -> 7.5, 32.5. min = 4: step 5 / 8 = 0.625, X = (k + 0.5) * 0.625 - 0.5 = -0.1875 (edge: 0), 0.4375,
// 1.0625, 1.6875 -> (0 + 4.375 + 10.625 + 16.875) / 4 = 7.96875; ox = 1: 2.3125, 2.9375, 3.5625, 4.1875 ->
// (23.125 + 29.375 + 35.625 + 40) / 4 = 32.03125 (4.1875 is past W - 1 = 4: clamps to 40).
TEST_P(RoiAlignGolden, SampleCountIsClampedToMinAndMax) {
  const Tensor rois = test::make_f32({1, 4}, {0, 0, 5, 0});
  RoiAlignParams p;
  p.maximum_samples_per_output = 1;
  EXPECT_EQ(run_roi_align(row_, rois, batch0_, 1, 2, p, GetParam()), (std::vector<float>{7.5, 32.5}));
  p.maximum_samples_per_output = 8;
  p.minimum_samples_per_output = 4;
  EXPECT_EQ(run_roi_align(row_, rois, batch0_, 1, 2, p, GetParam()), (std::vector<float>{7.96875, 32.03125}));
}

// §3.4 nearest: floor(X + 0.5), ties up. Zero-size boxes at x1 = 2 and 1 give X = 1.5 -> pixel 2 -> 20, and
// X = 0.5 -> pixel 1 -> 10 (linear would give 15 and 5).
TEST_P(RoiAlignGolden, NearestTiesGoUp) {
  const Tensor rois = test::make_f32({2, 4}, {2, 0.5, 2, 0.5, 1, 0.5, 1, 0.5});
  const Tensor batch = test::make_u32({2}, {0, 0});
  RoiAlignParams p;
  p.interpolation = InterpolationMode::Nearest;
  EXPECT_EQ(run_roi_align(row_, rois, batch, 1, 1, p, GetParam()), (std::vector<float>{20, 10}));
  p.interpolation = InterpolationMode::Linear;
  EXPECT_EQ(run_roi_align(row_, rois, batch, 1, 1, p, GetParam()), (std::vector<float>{15, 5}));
}

// §3.3 input_pixel_offset = 0 (torchvision aligned=False): box [0, 0, 4, 4], 2x2: X = 2 ox + k + 0.5 = 0.5, 1.5 |
// 2.5, 3.5 (3.5 clamps to 3). Averages: columns 1 and (2.5 + 3) / 2 = 2.75, rows 4 * 1 = 4 and 4 * 2.75 = 11:
// 4 + 1 = 5, 4 + 2.75 = 6.75, 11 + 1 = 12, 13.75.
// output_pixel_offset = 0 (ip back to 0.5): X = 2 ox + k - 0.5 = -0.5 (edge: 0), 0.5 | 1.5, 2.5: columns 0.25
// and 2, rows 1 and 8: 1.25, 3, 8.25, 10.
TEST_P(RoiAlignGolden, PixelOffsets) {
  const Tensor rois = test::make_f32({1, 4}, {0, 0, 4, 4});
  RoiAlignParams p;
  p.input_pixel_offset = 0.0f;
  EXPECT_EQ(run_roi_align(grid_, rois, batch0_, 2, 2, p, GetParam()), (std::vector<float>{5, 6.75, 12, 13.75}));
  p.input_pixel_offset = 0.5f;
  p.output_pixel_offset = 0.0f;
  EXPECT_EQ(run_roi_align(grid_, rois, batch0_, 2, 2, p, GetParam()), (std::vector<float>{1.25, 3, 8.25, 10}));
}

// §3.3 align_regions_to_corners, ip = 0: box [0, 0, 5, 0], OW = 2, sx = ceil(5 / 2) = 3, step = 5 / (6 - 1) = 1:
// X = 0 .. 5 -> 0, 10, 20 | 30, 40, 40 (X = 5 = W clamps) -> 10 and 110 / 3. A single sample sits on X1 - ip:
// box [2, 0, 4, 0], 1x1, min = max = 1 -> X = 2 -> 20.
TEST_P(RoiAlignGolden, AlignRegionsToCorners) {
  RoiAlignParams p;
  p.align_regions_to_corners = true;
  p.input_pixel_offset = 0.0f;
  EXPECT_EQ(run_roi_align(row_, test::make_f32({1, 4}, {0, 0, 5, 0}), batch0_, 1, 2, p, GetParam()),
            (std::vector<float>{10, 110.0f / 3.0f}));
  p.maximum_samples_per_output = 1;
  EXPECT_EQ(run_roi_align(row_, test::make_f32({1, 4}, {2, 0, 4, 0}), batch0_, 1, 1, p, GetParam()),
            (std::vector<float>{20}));
}

// §3.1 spatial scales: [0, 0, 8, 4] with scales (0.5, 1) is the box [0, 0, 4, 4] of AverageOfBlocks.
TEST_P(RoiAlignGolden, SpatialScalesApplyPerAxis) {
  const Tensor rois = test::make_f32({1, 4}, {0, 0, 8, 4});
  RoiAlignParams p;
  p.spatial_scale_x = 0.5f;
  EXPECT_EQ(run_roi_align(grid_, rois, batch0_, 2, 2, p, GetParam()), (std::vector<float>{2.5, 4.5, 10.5, 12.5}));
}

// §3: batch index picks the image, every channel is pooled on its own. Input {2, 2, 4, 4}: value = 4y + x, plus
// 100 for channel 1, plus 1000 for batch 1. The AverageOfBlocks box on batch 1 gives those averages + 1000 / 1100.
TEST_P(RoiAlignGolden, BatchIndexAndChannels) {
  std::vector<float> values;
  for (int n = 0; n < 2; ++n) {
    for (int c = 0; c < 2; ++c) {
      for (int i = 0; i < 16; ++i) values.push_back(static_cast<float>(i + 100 * c + 1000 * n));
    }
  }
  const Tensor in = test::make_f32({2, 2, 4, 4}, values);
  const Tensor rois = test::make_f32({1, 1, 2, 4}, {0, 0, 4, 4, 0, 0, 4, 4});
  const Tensor batch = test::make_u32({1, 1, 1, 2}, {1, 0});
  EXPECT_EQ(run_roi_align(in, rois, batch, 2, 2, {}, GetParam()),
            (std::vector<float>{1002.5, 1004.5, 1010.5, 1012.5, 1102.5, 1104.5, 1110.5, 1112.5,  //
                                2.5, 4.5, 10.5, 12.5, 102.5, 104.5, 110.5, 112.5}));
}

INSTANTIATE_TEST_SUITE_P(Backends, RoiAlignGolden, ::testing::ValuesIn(test::all_backends()), test::backend_name);

}  // namespace
}  // namespace rsz
