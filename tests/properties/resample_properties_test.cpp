// Invariants of RESAMPLE1 over seeded random data (SEMANTICS.md §1).
#include <gtest/gtest.h>

#include <sstream>

#include "golden/golden_util.h"

namespace rsz {
namespace {

ResampleParams make_params(InterpolationMode mode, std::array<float, 4> scales, float ip = 0.5f, float op = -0.5f) {
  ResampleParams p;
  p.interpolation = mode;
  p.scales = scales;
  p.input_pixel_offsets = {ip, ip, ip, ip};
  p.output_pixel_offsets = {op, op, op, op};
  return p;
}

std::string describe(const ResampleParams& p, const Dims& in, const Dims& out) {
  std::ostringstream s;
  s << to_string(p.interpolation) << " in " << dims_to_string(in) << " out " << dims_to_string(out) << " scales {"
    << p.scales[0] << ", " << p.scales[1] << ", " << p.scales[2] << ", " << p.scales[3] << "} offsets "
    << p.input_pixel_offsets[0] << " / " << p.output_pixel_offsets[0];
  return s.str();
}

const InterpolationMode kModes[] = {InterpolationMode::Nearest, InterpolationMode::Linear};

TEST(ResampleProperties, IdentityScaleCopies) {
  const Tensor in = test::random_f32({2, 3, 7, 5}, 11);
  for (const auto mode : kModes) {
    for (const float offset : {0.5f, 0.0f, 0.25f}) {
      const ResampleParams p = make_params(mode, {1, 1, 1, 1}, offset, -offset);
      EXPECT_TRUE(test::bits_equal(test::to_vector(in.const_view()),
                                   test::run_resample(in, in.sizes(), p, Backend::Auto),
                                   describe(p, in.sizes(), in.sizes())));
    }
  }
}

// §1.3: each step is a + w * (b - a), so a constant comes out exactly (a * (1 - w) + b * w would not: for 0.1f
// and w = 1/3 it gives 0.099999994f).
TEST(ResampleProperties, ConstantStaysExactlyConstant) {
  const std::array<float, 4> scale_sets[] = {{1, 1, 0.37f, 2.9f}, {1.5f, 0.7f, 3, 0.5f}, {1, 1, 1.0f / 3, 7}};
  for (const float constant : {0.3f, 0.1f, 1.1f, 3.3f, -0.9f}) {
    Tensor in(DataType::Float32, {2, 2, 5, 6});
    for (std::int64_t i = 0; i < in.element_count(); ++i) in.data_as<float>()[i] = constant;
    for (const auto& scales : scale_sets) {
      for (const float ip : {0.5f, 0.0f, 0.3f}) {
        const ResampleParams p = make_params(InterpolationMode::Linear, scales, ip, -0.5f);
        const Dims out_sizes = resample_output_sizes(in.sizes(), scales);
        for (float v : test::run_resample(in, out_sizes, p, Backend::Auto)) {
          ASSERT_EQ(v, constant) << describe(p, in.sizes(), out_sizes);
        }
      }
    }
  }
}

// §2: integer scales with offsets 0.5 / -0.5 never produce ties, so nearest is pure replication.
TEST(ResampleProperties, NearestIntegerUpsampleRepeats) {
  const Tensor in = test::random_f32({1, 2, 4, 5}, 12);
  for (const auto& [sh, sw] : {std::pair{2, 3}, std::pair{3, 1}, std::pair{7, 5}}) {
    const Dims out_sizes{1, 2, 4 * sh, 5 * sw};
    const auto p = make_params(InterpolationMode::Nearest, {1, 1, static_cast<float>(sh), static_cast<float>(sw)});
    const auto out = test::run_resample(in, out_sizes, p, Backend::Auto);
    const auto src = test::to_vector(in.const_view());
    std::size_t i = 0;
    for (int c = 0; c < 2; ++c) {
      for (int y = 0; y < 4 * sh; ++y) {
        for (int x = 0; x < 5 * sw; ++x, ++i) {
          ASSERT_EQ(out[i], src[static_cast<std::size_t>(c * 20 + (y / sh) * 5 + x / sw)])
              << describe(p, in.sizes(), out_sizes) << " at c " << c << " y " << y << " x " << x;
        }
      }
    }
  }
}

// Resampling with N and C scale 1 equals resampling every HxW plane on its own.
TEST(ResampleProperties, FourDEqualsPerPlaneTwoD) {
  const Tensor in = test::random_f32({2, 3, 6, 9}, 13);
  for (const auto mode : kModes) {
    const auto p = make_params(mode, {1, 1, 0.6f, 1.7f});
    const Dims out_sizes{2, 3, 3, 15};
    const auto whole = test::run_resample(in, out_sizes, p, Backend::Auto);
    for (int plane = 0; plane < 6; ++plane) {
      const ConstTensorView slice(in.data_as<float>() + plane * 54, DataType::Float32, {1, 1, 6, 9});
      Tensor out(DataType::Float32, {1, 1, 3, 15});
      resample(slice, out.view(), p);
      const auto part = test::to_vector(out.const_view());
      const std::vector<float> expected(whole.begin() + plane * 45, whole.begin() + (plane + 1) * 45);
      ASSERT_TRUE(test::bits_equal(expected, part, describe(p, {1, 1, 6, 9}, {1, 1, 3, 15}) + " plane " +
                                                       std::to_string(plane)));
    }
  }
}

// An interleaved HWC image viewed as NCHW gives the packed result; a padded output view leaves its margins alone.
TEST(ResampleProperties, StridedViewsMatchPackedAndLeaveMarginsUntouched) {
  const Dims in_sizes{1, 3, 5, 7};
  const Tensor packed = test::random_f32(in_sizes, 14);
  test::StridedBuffer nhwc = test::make_strided(in_sizes, test::nhwc_strides(in_sizes), 0.0f);
  test::copy_into(packed.const_view(), nhwc);
  for (const auto mode : kModes) {
    const auto p = make_params(mode, {1, 1, 1.6f, 0.45f});
    const Dims out_sizes{1, 3, 8, 3};
    const auto expected = test::run_resample(packed, out_sizes, p, Backend::Auto);
    // Output rows padded to 5 columns, channel planes 50 apart: many addresses the view never touches.
    test::StridedBuffer out = test::make_strided(out_sizes, {150, 50, 5, 1}, -99.0f);
    resample(nhwc.cview(), out.view(), p);
    EXPECT_TRUE(test::bits_equal(expected, test::to_vector(out.cview()), describe(p, in_sizes, out_sizes)));
    std::size_t untouched = 0;
    for (float v : out.storage) untouched += v == -99.0f;
    EXPECT_EQ(untouched, out.storage.size() - 72) << "elements outside the output view were written";
  }
}

// Broadcast input (stride 0) reads the same element everywhere.
TEST(ResampleProperties, ZeroStrideInputBroadcasts) {
  const float value = 2.75f;
  const ConstTensorView in(&value, DataType::Float32, {1, 2, 3, 4}, {0, 0, 0, 0});
  Tensor out(DataType::Float32, {1, 2, 5, 2});
  resample(in, out.view(), make_params(InterpolationMode::Linear, {1, 1, 1.7f, 0.5f}));
  for (float v : test::to_vector(out.const_view())) EXPECT_EQ(v, value);
}

// The backends agree over a sweep of shapes, scales (< 1, 1, non-integer, integer) and offsets.
TEST(ResampleProperties, BackendsAgreeOverSweep) {
  std::uint32_t seed = 100;
  for (const auto mode : kModes) {
    for (const std::array<float, 4>& scales : {std::array<float, 4>{1, 1, 0.5f, 0.5f}, {1, 1, 2.0f / 3, 1.5f},
                                                {1, 1, 2, 3}, {2, 0.5f, 1.25f, 0.8f}}) {
      for (const auto& [ip, op] : {std::pair{0.5f, -0.5f}, std::pair{0.0f, 0.0f}, std::pair{0.5f, 0.0f}}) {
        const Tensor in = test::random_f32({2, 3, 9, 11}, seed++);
        const Dims out_sizes = resample_output_sizes(in.sizes(), scales);
        const auto p = make_params(mode, scales, ip, op);
        EXPECT_TRUE(test::bits_equal(test::run_resample(in, out_sizes, p, Backend::Reference),
                                     test::run_resample(in, out_sizes, p, Backend::Auto),
                                     describe(p, in.sizes(), out_sizes)));
      }
    }
  }
}


// §1.7 worked by hand: a ramp 0..7 halved along W with pixel-centre offsets. x = 2 o + 0.5, the taps within 2 input
// pixels weigh 1 - |i - x| / 2: interior outputs 1/8, 3/8, 3/8, 1/8 of four samples (an exact mean), the first one
// only 0.75, 0.75, 0.25 of samples 0, 1, 2 (index -1 is outside), normalized by 1.75.
TEST(ResampleProperties, AntialiasHalvingWeightsByHand) {
  Tensor in(DataType::Float32, {1, 1, 1, 8});
  for (int i = 0; i < 8; ++i) in.data_as<float>()[i] = static_cast<float>(i);
  ResampleParams p = make_params(InterpolationMode::Linear, {1, 1, 1, 0.5f});
  p.antialiased = true;
  const float w = 0.75f / 1.75f;
  const float edge = w * 0.0f + w * 1.0f + (0.25f / 1.75f) * 2.0f;
  // The last output mirrors the first: samples 7, 6, 5 with the same weights, summed from index 5.
  const float last = (0.25f / 1.75f) * 5.0f + w * 6.0f + w * 7.0f;
  for (const Backend backend : {Backend::Reference, Backend::Cpu}) {
    const std::vector<float> got = test::run_resample(in, {1, 1, 1, 4}, p, backend);
    ASSERT_EQ(got.size(), 4u);
    EXPECT_EQ(got[0], edge);
    EXPECT_EQ(got[1], 2.5f);  // 0.125 + 0.75 + 1.125 + 0.5
    EXPECT_EQ(got[2], 4.5f);
    EXPECT_EQ(got[3], last);
    // RESAMPLE1's 2-tap filter reads samples 0 and 1 only (0.5), 2 and 3 (2.5), ...
    p.antialiased = false;
    EXPECT_EQ(test::run_resample(in, {1, 1, 1, 4}, p, backend)[0], 0.5f);
    p.antialiased = true;
  }
}

// §1.7: a checkerboard downscaled by 4 with offsets 0 / 0 (x = 4 o, exactly on a black pixel): the 2-tap filter
// keeps only black pixels (an all-black image, the aliasing), the antialiased filter averages 7 x 7 samples into
// flat grey (black and white weigh 2 each on both axes) away from the first row and column; nearest ignores it.
TEST(ResampleProperties, AntialiasRemovesCheckerboardAliasing) {
  Tensor in(DataType::Float32, {1, 1, 32, 32});
  for (int y = 0; y < 32; ++y) {
    for (int x = 0; x < 32; ++x) in.data_as<float>()[y * 32 + x] = static_cast<float>((x + y) % 2);
  }
  ResampleParams p = make_params(InterpolationMode::Linear, {1, 1, 0.25f, 0.25f}, 0.0f, 0.0f);
  for (const Backend backend : {Backend::Reference, Backend::Cpu}) {
    p.interpolation = InterpolationMode::Linear;
    p.antialiased = false;
    for (const float v : test::run_resample(in, {1, 1, 8, 8}, p, backend)) {
      ASSERT_EQ(v, 0.0f);
    }
    p.antialiased = true;
    const std::vector<float> got = test::run_resample(in, {1, 1, 8, 8}, p, backend);
    for (std::size_t i = 0; i < got.size(); ++i) {
      if (i / 8 != 0 && i % 8 != 0) {
        EXPECT_EQ(got[i], 0.5f) << "output " << i;
      }
    }
    p.interpolation = InterpolationMode::Nearest;
    const std::vector<float> nearest = test::run_resample(in, {1, 1, 8, 8}, p, backend);
    p.antialiased = false;
    EXPECT_TRUE(test::bits_equal(test::run_resample(in, {1, 1, 8, 8}, p, backend), nearest, "nearest ignores it"));
  }
}

// §1.2: the four rounding directions on x = o - 0.5 (scale 1, offsets 0 / 0.5): every x is an exact half, where
// round_prefer_ceil and ceil take index o, round_prefer_floor and floor index o - 1 (clamped to 0); and on
// x = o + 0.25 (offsets -0.25 / 0): the two round modes give o, floor o, ceil o + 1 (clamped to 3).
TEST(ResampleProperties, RoundingDirectionsByHand) {
  Tensor in(DataType::Float32, {1, 1, 1, 4});
  for (int i = 0; i < 4; ++i) in.data_as<float>()[i] = 10.0f + static_cast<float>(i);
  struct Case {
    NearestRounding rounding;
    float ip;
    float op;
    std::vector<float> expected;
  };
  const Case cases[] = {
      {NearestRounding::RoundPreferCeil, 0.0f, 0.5f, {10, 11, 12, 13}},
      {NearestRounding::RoundPreferFloor, 0.0f, 0.5f, {10, 10, 11, 12}},
      {NearestRounding::Floor, 0.0f, 0.5f, {10, 10, 11, 12}},
      {NearestRounding::Ceil, 0.0f, 0.5f, {10, 11, 12, 13}},
      {NearestRounding::RoundPreferCeil, -0.25f, 0.0f, {10, 11, 12, 13}},
      {NearestRounding::RoundPreferFloor, -0.25f, 0.0f, {10, 11, 12, 13}},
      {NearestRounding::Floor, -0.25f, 0.0f, {10, 11, 12, 13}},
      {NearestRounding::Ceil, -0.25f, 0.0f, {11, 12, 13, 13}},
  };
  for (const Case& c : cases) {
    ResampleParams p = make_params(InterpolationMode::Nearest, {1, 1, 1, 1}, c.ip, c.op);
    p.rounding_direction = c.rounding;
    for (const Backend backend : {Backend::Reference, Backend::Cpu}) {
      EXPECT_EQ(test::run_resample(in, {1, 1, 1, 4}, p, backend), c.expected)
          << to_string(c.rounding) << " offsets " << c.ip << " / " << c.op;
    }
  }
}

}  // namespace
}  // namespace rsz
