// UPSAMPLE_2D goldens: the recorded DirectML output in SEMANTICS.md §2 and hand derivations.
#include <gtest/gtest.h>

#include "golden/golden_util.h"

namespace rsz {
namespace {

using test::run_upsample2d;

class Upsample2dGolden : public ::testing::TestWithParam<Backend> {};

// [OBS] SEMANTICS.md §2: real DirectML, 2x2 input {1, 2, 3, 4}, scale 2x2, linear.
const std::vector<float> kDirectMLLinear2x2{1,   1.25, 1.75, 2,   1.5, 1.75, 2.25, 2.5,
                                           2.5, 2.75, 3.25, 3.5, 3,   3.25, 3.75, 4};

TEST_P(Upsample2dGolden, LinearMatchesRecordedDirectML) {
  const Tensor in = test::make_f32({1, 1, 2, 2}, {1, 2, 3, 4});
  EXPECT_EQ(run_upsample2d(in, {InterpolationMode::Linear, {2, 2}}, GetParam()), kDirectMLLinear2x2);
}

// §2 nearest: out[h][w] = in[h / 2][w / 3].
TEST_P(Upsample2dGolden, NearestReplicates) {
  const Tensor in = test::make_f32({1, 1, 2, 2}, {1, 2, 3, 4});
  EXPECT_EQ(run_upsample2d(in, {InterpolationMode::Nearest, {2, 3}}, GetParam()),
            (std::vector<float>{1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4}));
}

// §2 linear with unequal scales {1, 4} on [0, 8]: x = (o + 0.5) / 4 - 0.5 = -0.375, -0.125, 0.125, 0.375, 0.625,
// 0.875, 1.125, 1.375 -> clamp to [0, 1] -> 0, 0, 1, 3, 5, 7, 8, 8. The single row is untouched by scale 1.
TEST_P(Upsample2dGolden, LinearUnequalScales) {
  const Tensor in = test::make_f32({1, 1, 1, 2}, {0, 8});
  EXPECT_EQ(run_upsample2d(in, {InterpolationMode::Linear, {1, 4}}, GetParam()),
            (std::vector<float>{0, 0, 1, 3, 5, 7, 8, 8}));
}

// §2 rank 5: each depth slice is upsampled on its own (D, like N and C, is never blended). Depth 0 holds
// {1, 2, 3, 4}, depth 1 holds {10, 20, 30, 40}: the output is the DirectML result, then ten times it.
TEST_P(Upsample2dGolden, Rank5KeepsDepthSlicesApart) {
  const Tensor in = test::make_f32({1, 1, 2, 2, 2}, {1, 2, 3, 4, 10, 20, 30, 40});
  std::vector<float> expected = kDirectMLLinear2x2;
  for (float v : kDirectMLLinear2x2) expected.push_back(v * 10.0f);
  EXPECT_EQ(run_upsample2d(in, {InterpolationMode::Linear, {2, 2}}, GetParam()), expected);
  Tensor nearest_out(DataType::Float32, {1, 1, 2, 4, 2});
  upsample2d(in.const_view(), nearest_out.view(), {InterpolationMode::Nearest, {2, 1}}, {GetParam(), 1});
  EXPECT_EQ(test::to_vector(nearest_out.const_view()),
            (std::vector<float>{1, 2, 1, 2, 3, 4, 3, 4, 10, 20, 10, 20, 30, 40, 30, 40}));
}

INSTANTIATE_TEST_SUITE_P(Backends, Upsample2dGolden, ::testing::ValuesIn(test::all_backends()), test::backend_name);

}  // namespace
}  // namespace rsz
