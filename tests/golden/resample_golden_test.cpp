// RESAMPLE1/2/3 goldens. Each cites its source: the recorded DirectML output in SEMANTICS.md, or a hand derivation of
// SEMANTICS.md §1 with the arithmetic shown (x = (o - op) / s - ip per axis).
#include <gtest/gtest.h>

#include <limits>

#include "golden/golden_util.h"

namespace rsz {
namespace {

using test::run_resample;

ResampleParams params_2d(InterpolationMode mode, float sh, float sw, float ip = 0.5f, float op = -0.5f) {
  ResampleParams p;
  p.interpolation = mode;
  p.scales = {1.0f, 1.0f, sh, sw};
  p.input_pixel_offsets = {ip, ip, ip, ip};
  p.output_pixel_offsets = {op, op, op, op};
  return p;
}

class ResampleGolden : public ::testing::TestWithParam<Backend> {};

// [OBS] SEMANTICS.md §1.2: real DirectML, a 4x6 -> 2x3 nearest downsample with offsets 0.5 / -0.5 returns rows
// {1, 3} and columns {1, 3, 5}. Derivation: x = (o + 0.5) / 0.5 - 0.5 = 2o + 0.5, floor(2o + 1) = 2o + 1; the
// exact halves 0.5, 2.5, 4.5 go UP (round-half-even would give {0, 2, 4}, floor {0, 2, 4}).
TEST_P(ResampleGolden, NearestDownsampleTiesGoUp) {
  const Tensor in = test::iota_f32({1, 1, 4, 6});  // value = 6 * row + column
  const auto out = run_resample(in, {1, 1, 2, 3}, params_2d(InterpolationMode::Nearest, 0.5f, 0.5f), GetParam());
  EXPECT_EQ(out, (std::vector<float>{7, 9, 11, 19, 21, 23}));
}

// §1.2 + §1.4: edges clamp. Scale 0.5 on [10, 20, 30] into 3 outputs: x = 2o + 0.5 -> floor(2o + 1) = 1, 3, 5,
// clamped to [0, 2] -> 1, 2, 2 (the scaled input is smaller than the output: the edge repeats, §1.5).
// Output offset 2.5 shifts left past the start: x = (o - 2.5) / 1 - 0.5 = o - 3 -> floor(o - 2.5) = -3, -2, -1
// clamped to 0.
TEST_P(ResampleGolden, NearestClampsAtBothEdges) {
  const Tensor in = test::make_f32({1, 1, 1, 3}, {10, 20, 30});
  EXPECT_EQ(run_resample(in, {1, 1, 1, 3}, params_2d(InterpolationMode::Nearest, 1.0f, 0.5f), GetParam()),
            (std::vector<float>{20, 30, 30}));
  EXPECT_EQ(run_resample(in, {1, 1, 1, 3}, params_2d(InterpolationMode::Nearest, 1.0f, 1.0f, 0.5f, 2.5f), GetParam()),
            (std::vector<float>{10, 10, 10}));
}

// §1 mapping "PyTorch nearest / OpenCV INTER_NEAREST": offsets 0.5 / 0 make floor(x + 0.5) = floor(o / s).
// iota 4 at scale 0.5: x = o / 0.5 - 0.5 = 2o - 0.5 -> floor(2o) = 0, 2 (half_pixel above gives 1, 3).
TEST_P(ResampleGolden, NearestFloorPreset) {
  const Tensor in = test::iota_f32({1, 1, 1, 4});
  EXPECT_EQ(run_resample(in, {1, 1, 1, 2}, params_2d(InterpolationMode::Nearest, 1.0f, 0.5f, 0.5f, 0.0f), GetParam()),
            (std::vector<float>{0, 2}));
}

// §1.3, 1-D x2 linear on [0, 8]: x = (o + 0.5) / 2 - 0.5 = -0.25, 0.25, 0.75, 1.25; clamped to [0, 1]:
// 0, 0.25, 0.75, 1 -> 0, 0 + 0.25 * 8 = 2, 6, 8.
TEST_P(ResampleGolden, LinearUpsampleClampsEdges) {
  const Tensor in = test::make_f32({1, 1, 1, 2}, {0, 8});
  EXPECT_EQ(run_resample(in, {1, 1, 1, 4}, params_2d(InterpolationMode::Linear, 1.0f, 2.0f), GetParam()),
            (std::vector<float>{0, 2, 6, 8}));
}

// §1.5: the scale is used as given, never recomputed from the sizes. Scale 2 into 2 outputs samples only the first
// half of the x2 result above: x = -0.25, 0.25 -> 0, 2 (recomputing the scale as 2/2 = 1 would give 0, 8).
TEST_P(ResampleGolden, LargerScaledInputIsCropped) {
  const Tensor in = test::make_f32({1, 1, 1, 2}, {0, 8});
  EXPECT_EQ(run_resample(in, {1, 1, 1, 2}, params_2d(InterpolationMode::Linear, 1.0f, 2.0f), GetParam()),
            (std::vector<float>{0, 2}));
}

// [OBS] SEMANTICS.md §2: real DirectML UPSAMPLE_2D linear 2x2 -> 4x4 of {1, 2, 3, 4}, which §2 defines as RESAMPLE1
// linear with scales {1, 1, 2, 2} and offsets 0.5 / -0.5.
TEST_P(ResampleGolden, LinearMatchesRecordedDirectMLUpsample) {
  const Tensor in = test::make_f32({1, 1, 2, 2}, {1, 2, 3, 4});
  EXPECT_EQ(run_resample(in, {1, 1, 4, 4}, params_2d(InterpolationMode::Linear, 2.0f, 2.0f), GetParam()),
            (std::vector<float>{1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25, 3.5, 3, 3.25, 3.75, 4}));
}

// §1.3: interpolation runs across N and C too. Input {2, 2, 1, 1} = n * 2 + c, scales {2, 2, 1, 1}: on N and C,
// x = -0.25, 0.25, 0.75, 1.25 -> positions p = 0, 0.25, 0.75, 1, so out[n][c] = 2 p[n] + p[c]. C is combined
// before N: out[1][2] = lerp(lerp(0, 1, .75), lerp(2, 3, .75), .25) = .75 + .25 * (2.75 - .75) = 1.25.
TEST_P(ResampleGolden, LinearBlendsBatchAndChannel) {
  const Tensor in = test::make_f32({2, 2, 1, 1}, {0, 1, 2, 3});
  ResampleParams p = params_2d(InterpolationMode::Linear, 1.0f, 1.0f);
  p.scales = {2.0f, 2.0f, 1.0f, 1.0f};
  const std::vector<float> pos{0.0f, 0.25f, 0.75f, 1.0f};
  std::vector<float> expected;
  for (float pn : pos) {
    for (float pc : pos) expected.push_back(2 * pn + pc);
  }
  EXPECT_EQ(run_resample(in, {4, 4, 1, 1}, p, GetParam()), expected);
}

// §1 "asymmetric" (offsets 0 / 0): x = o / 2 = 0, 0.5, 1, 1.5 -> clamp -> 0, 4, 8, 8.
// §1 "align_corners" (scale (4 - 1) / (2 - 1) = 3, offsets 0 / 0): x = o / 3 = 0, 1/3, 2/3, 1 -> 0,
// (1/3f) * 8, (2/3f) * 8, 8 (all float32 as written).
TEST_P(ResampleGolden, LinearOffsetPresets) {
  const Tensor in = test::make_f32({1, 1, 1, 2}, {0, 8});
  EXPECT_EQ(run_resample(in, {1, 1, 1, 4}, params_2d(InterpolationMode::Linear, 1.0f, 2.0f, 0.0f, 0.0f), GetParam()),
            (std::vector<float>{0, 4, 8, 8}));
  const float third = 1.0f / 3.0f;
  const float two_thirds = 2.0f / 3.0f;
  EXPECT_EQ(run_resample(in, {1, 1, 1, 4}, params_2d(InterpolationMode::Linear, 1.0f, 3.0f, 0.0f, 0.0f), GetParam()),
            (std::vector<float>{0, 0.0f + third * 8.0f, 0.0f + two_thirds * 8.0f, 8}));
}

// §1.1 output offset: ip 0, op -1.5, scale 1: x = o + 1.5 -> floor(o + 2) = 2, 3, 4, 5 -> clamp -> 2, 3, 4, 4.
// Linear with ip 0.25, op 0: x = o - 0.25 -> clamp(-0.25) = 0 -> 0; 0.75 -> 7.5; 1.75 -> 17.5; 2.75 -> 27.5.
TEST_P(ResampleGolden, PixelOffsetsShift) {
  const Tensor in = test::make_f32({1, 1, 1, 5}, {0, 10, 20, 30, 40});
  EXPECT_EQ(run_resample(in, {1, 1, 1, 4}, params_2d(InterpolationMode::Nearest, 1.0f, 1.0f, 0.0f, -1.5f), GetParam()),
            (std::vector<float>{20, 30, 40, 40}));
  EXPECT_EQ(run_resample(in, {1, 1, 1, 4}, params_2d(InterpolationMode::Linear, 1.0f, 1.0f, 0.25f, 0.0f), GetParam()),
            (std::vector<float>{0, 7.5f, 17.5f, 27.5f}));
}

// §1.3: 2-D linear, W first, then H. Input {{0, 10}, {100, 1000}}, scale 1x1 with ip 0.25, op 0:
// x = o - 0.25 -> position (0.75, 0.75) for output (1, 1): rows 0 + .75 * 10 = 7.5 and 100 + .75 * 900 = 775;
// then 7.5 + .75 * (775 - 7.5) = 583.125. Output (1, 0): y = .75, x clamps to 0: 0 + .75 * 100 = 75.
TEST_P(ResampleGolden, LinearTwoDimensional) {
  const Tensor in = test::make_f32({1, 1, 2, 2}, {0, 10, 100, 1000});
  const auto out =
      run_resample(in, {1, 1, 2, 2}, params_2d(InterpolationMode::Linear, 1.0f, 1.0f, 0.25f, 0.0f), GetParam());
  EXPECT_EQ(out, (std::vector<float>{0, 7.5f, 75.0f, 583.125f}));
}

// §1.3: an axis with w == 0 contributes one tap. Identity scale puts every sample on a pixel (w = 0), so infinite or
// huge neighbours never enter: a + 0 * (inf - a) would be NaN, a + 0 * (-3e38 - 3e38) would be NaN too.
TEST_P(ResampleGolden, ZeroWeightTakesOneTap) {
  const float inf = std::numeric_limits<float>::infinity();
  const Tensor in = test::make_f32({1, 1, 1, 4}, {1, inf, 3e38f, -3e38f});
  EXPECT_EQ(run_resample(in, {1, 1, 1, 4}, params_2d(InterpolationMode::Linear, 1.0f, 1.0f), GetParam()),
            (std::vector<float>{1, inf, 3e38f, -3e38f}));
}

// §1.7 (RESAMPLE3 Antialiased), by hand: [0 1 2 3 4 5 6 7] halved, offsets 0.5 / -0.5. x = 2o + 0.5 and the
// triangle widened by 1 / 0.5 = 2 gives w_i = 1 - |i - x| / 2 on the indices with |i - x| < 2:
// o = 0: x = 0.5, taps 0, 1, 2 (index -1 lies outside and is dropped, not edge-repeated) with 0.75, 0.75, 0.25,
//        total 1.75: (0 * 0.75 + 1 * 0.75 + 2 * 0.25) / 1.75 = 5 / 7;
// o = 1: x = 2.5, taps 1..4 with 0.25, 0.75, 0.75, 0.25, total 2: (0.25 + 1.5 + 2.25 + 1) / 2 = 2.5;
// o = 2: x = 4.5, the same shape: 4.5;
// o = 3: x = 6.5, taps 5, 6, 7 (8 dropped) with 0.25, 0.75, 0.75: (1.25 + 4.5 + 5.25) / 1.75 = 44 / 7.
// RESAMPLE1's 2-tap filter would give 0.5, 2.5, 4.5, 6.5 (the average of two neighbours). The first and last
// values carry float32 rounding of the normalized weights: within 4 ulp of the exact fractions.
TEST_P(ResampleGolden, AntialiasedHalvingWidensTheTriangle) {
  const Tensor in = test::iota_f32({1, 1, 1, 8});
  ResampleParams p = params_2d(InterpolationMode::Linear, 1.0f, 0.5f);
  p.antialiased = true;
  const auto out = run_resample(in, {1, 1, 1, 4}, p, GetParam());
  ASSERT_EQ(out.size(), 4u);
  EXPECT_NEAR(out[0], 5.0f / 7.0f, 2e-7f);
  EXPECT_EQ(out[1], 2.5f);
  EXPECT_EQ(out[2], 4.5f);
  EXPECT_NEAR(out[3], 44.0f / 7.0f, 2e-6f);
  p.antialiased = false;
  EXPECT_EQ(run_resample(in, {1, 1, 1, 4}, p, GetParam()), (std::vector<float>{0.5f, 2.5f, 4.5f, 6.5f}));
}

// §1.2 (RESAMPLE2), by hand: [10 20 30 40] halved with offsets 0.5 / -0.5 puts every sample on a tie, x = 2o + 0.5
// = 0.5, 2.5: round_prefer_ceil floor(x + 0.5) = 1, 3; round_prefer_floor ceil(x - 0.5) = 0, 2; floor 0, 2; ceil
// 1, 3. Doubled instead, x = o / 2 - 0.25 = -0.25, 0.25, 0.75, 1.25: floor -> -1 (clamped 0), 0, 0, 1; ceil -> 0, 1,
// 1, 2 (clamped 1); both rounding rules -> 0, 0, 1, 1.
TEST_P(ResampleGolden, NearestRoundingDirections) {
  const Tensor in = test::make_f32({1, 1, 1, 4}, {10, 20, 30, 40});
  const Tensor pair = test::make_f32({1, 1, 1, 2}, {10, 20});
  struct Case {
    NearestRounding rounding;
    std::vector<float> halved;
    std::vector<float> doubled;
  };
  for (const Case& c : {Case{NearestRounding::RoundPreferCeil, {20, 40}, {10, 10, 20, 20}},
                        Case{NearestRounding::RoundPreferFloor, {10, 30}, {10, 10, 20, 20}},
                        Case{NearestRounding::Floor, {10, 30}, {10, 10, 10, 20}},
                        Case{NearestRounding::Ceil, {20, 40}, {10, 20, 20, 20}}}) {
    ResampleParams p = params_2d(InterpolationMode::Nearest, 1.0f, 0.5f);
    p.rounding_direction = c.rounding;
    EXPECT_EQ(run_resample(in, {1, 1, 1, 2}, p, GetParam()), c.halved) << to_string(c.rounding);
    p.scales[3] = 2.0f;
    EXPECT_EQ(run_resample(pair, {1, 1, 1, 4}, p, GetParam()), c.doubled) << to_string(c.rounding);
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, ResampleGolden, ::testing::ValuesIn(test::all_backends()), test::backend_name);

}  // namespace
}  // namespace rsz
