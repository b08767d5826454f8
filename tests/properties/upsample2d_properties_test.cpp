// Invariants of UPSAMPLE_2D (SEMANTICS.md §2).
#include <gtest/gtest.h>

#include "golden/golden_util.h"

namespace rsz {
namespace {

// §2: upsample2d is RESAMPLE1 with scales {1, 1, sh, sw} and offsets 0.5 / -0.5, bit for bit, in both modes.
TEST(Upsample2dProperties, EqualsResampleWithIntegerScales) {
  std::uint32_t seed = 200;
  for (const auto mode : {InterpolationMode::Nearest, InterpolationMode::Linear}) {
    for (const ScaleSize scale : {ScaleSize{2, 2}, ScaleSize{3, 1}, ScaleSize{1, 4}, ScaleSize{5, 3}}) {
      const Tensor in = test::random_f32({2, 3, 5, 7}, seed++);
      ResampleParams rp;
      rp.interpolation = mode;
      rp.scales = {1, 1, static_cast<float>(scale.height), static_cast<float>(scale.width)};
      const Dims out_sizes = upsample2d_output_sizes(in.sizes(), scale);
      const auto expected = test::run_resample(in, out_sizes, rp, Backend::Reference);
      for (const Backend backend : test::all_backends()) {
        EXPECT_TRUE(test::bits_equal(expected, test::run_upsample2d(in, {mode, scale}, backend),
                                     std::string(to_string(mode)) + " scale " + std::to_string(scale.height) + "x" +
                                         std::to_string(scale.width) + " backend " + to_string(backend)));
      }
    }
  }
}

// Rank 5: every depth slice equals the rank-4 upsample of that slice.
TEST(Upsample2dProperties, Rank5EqualsPerDepthRank4) {
  const Tensor in = test::random_f32({2, 2, 3, 4, 5}, 201);
  for (const auto mode : {InterpolationMode::Nearest, InterpolationMode::Linear}) {
    const Upsample2dParams p{mode, {2, 3}};
    const auto whole = test::run_upsample2d(in, p, Backend::Auto);
    const std::size_t out_slice = 8 * 15;
    for (int slice = 0; slice < 12; ++slice) {  // N * C * D slices
      const ConstTensorView part(in.data_as<float>() + slice * 20, DataType::Float32, {1, 1, 4, 5});
      Tensor out(DataType::Float32, {1, 1, 8, 15});
      upsample2d(part, out.view(), p);
      const std::vector<float> expected(whole.begin() + static_cast<std::ptrdiff_t>(slice * out_slice),
                                        whole.begin() + static_cast<std::ptrdiff_t>((slice + 1) * out_slice));
      ASSERT_TRUE(test::bits_equal(expected, test::to_vector(out.const_view()),
                                   std::string(to_string(mode)) + " slice " + std::to_string(slice)));
    }
  }
}

TEST(Upsample2dProperties, StridedViewsMatchPackedAndLeaveMarginsUntouched) {
  const Dims in_sizes{1, 4, 3, 5};
  const Tensor packed = test::random_f32(in_sizes, 202);
  test::StridedBuffer nhwc = test::make_strided(in_sizes, test::nhwc_strides(in_sizes), 0.0f);
  test::copy_into(packed.const_view(), nhwc);
  for (const auto mode : {InterpolationMode::Nearest, InterpolationMode::Linear}) {
    const Upsample2dParams p{mode, {2, 2}};
    const Dims out_sizes{1, 4, 6, 10};
    test::StridedBuffer out = test::make_strided(out_sizes, test::nhwc_strides({1, 5, 6, 10}), -99.0f);
    out.strides = {300, 1, 50, 5};  // NHWC with a fifth, never written, channel slot
    upsample2d(nhwc.cview(), out.view(), p);
    EXPECT_TRUE(test::bits_equal(test::run_upsample2d(packed, p, Backend::Reference), test::to_vector(out.cview()),
                                 to_string(mode)));
    for (std::size_t i = 4; i < 300; i += 5) ASSERT_EQ(out.storage[i], -99.0f) << "padding channel written at " << i;
  }
}

}  // namespace
}  // namespace rsz
