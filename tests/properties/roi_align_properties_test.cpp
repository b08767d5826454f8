// Invariants of ROI_ALIGN (SEMANTICS.md §3).
#include <gtest/gtest.h>

#include <random>

#include "golden/golden_util.h"

namespace rsz {
namespace {

struct RoiSet {
  Tensor rois;
  Tensor batch_indices;
};

// Random boxes mostly inside a W x H map, some spilling over the edges, some inverted or empty.
RoiSet random_rois(std::int64_t count, std::uint32_t n, float w, float h, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> x(-2.0f, w + 2.0f);
  std::uniform_real_distribution<float> y(-2.0f, h + 2.0f);
  std::vector<float> boxes;
  std::vector<std::uint32_t> batch;
  for (std::int64_t r = 0; r < count; ++r) {
    boxes.insert(boxes.end(), {x(rng), y(rng), x(rng), y(rng)});
    batch.push_back(static_cast<std::uint32_t>(rng() % n));
  }
  boxes[0] = boxes[2];  // an empty-width box
  return {test::make_f32({count, 4}, boxes), test::make_u32({count}, batch)};
}

TEST(RoiAlignProperties, ConstantMapGivesTheConstantInside) {
  Tensor in(DataType::Float32, {1, 2, 6, 8});
  for (std::int64_t i = 0; i < in.element_count(); ++i) in.data_as<float>()[i] = 0.7f;
  const Tensor rois = test::make_f32({3, 4}, {0, 0, 8, 6, 1.3f, 0.2f, 7.9f, 5.1f, 6, 5, 2, 1});
  const Tensor batch = test::make_u32({3}, {0, 0, 0});
  for (const auto mode : {InterpolationMode::Nearest, InterpolationMode::Linear}) {
    for (const auto reduction : {RoiReduction::Average, RoiReduction::Max}) {
      RoiAlignParams p;
      p.interpolation = mode;
      p.reduction = reduction;
      for (float v : test::run_roi_align(in, rois, batch, 3, 4, p, Backend::Auto)) {
        ASSERT_EQ(v, 0.7f) << to_string(mode) << " " << to_string(reduction);
      }
    }
  }
}

// Swapping x1 and x2 mirrors the output columns (up to float rounding of the mirrored sample positions).
TEST(RoiAlignProperties, InvertedBoxMirrorsColumns) {
  const Tensor in = test::random_f32({1, 2, 9, 11}, 300);
  const Tensor rois = test::make_f32({2, 4}, {1.3f, 2.1f, 8.6f, 7.7f, 8.6f, 2.1f, 1.3f, 7.7f});
  const Tensor batch = test::make_u32({2}, {0, 0});
  const auto out = test::run_roi_align(in, rois, batch, 3, 5, {}, Backend::Auto);
  for (int c = 0; c < 2; ++c) {
    for (int y = 0; y < 3; ++y) {
      for (int x = 0; x < 5; ++x) {
        const float normal = out[static_cast<std::size_t>((c * 3 + y) * 5 + x)];
        const float mirrored = out[static_cast<std::size_t>(30 + (c * 3 + y) * 5 + (4 - x))];
        ASSERT_NEAR(normal, mirrored, 1e-5f) << "c " << c << " y " << y << " x " << x;
      }
    }
  }
}

TEST(RoiAlignProperties, RoiShapesAndStridedRoisAgree) {
  const Tensor in = test::random_f32({2, 3, 7, 9}, 301);
  const RoiSet set = random_rois(5, 2, 9, 7, 302);
  const auto expected = test::run_roi_align(in, set.rois, set.batch_indices, 2, 3, {}, Backend::Reference);
  // {1, 1, R, 4} rois and {1, R} indices over the same memory.
  Tensor out(DataType::Float32, {5, 3, 2, 3});
  roi_align(in.const_view(), ConstTensorView(set.rois.data(), DataType::Float32, {1, 1, 5, 4}),
            ConstTensorView(set.batch_indices.data(), DataType::UInt32, {1, 5}), out.view(), {});
  EXPECT_TRUE(test::bits_equal(expected, test::to_vector(out.const_view()), "{1, 1, R, 4} rois"));
  // Detectron-style rows [batch, x1, y1, x2, y2]: the boxes are a view with row stride 5 starting at column 1.
  std::vector<float> rows;
  const auto boxes = test::to_vector(set.rois.const_view());
  for (int r = 0; r < 5; ++r) {
    rows.push_back(-1.0f);
    rows.insert(rows.end(), boxes.begin() + r * 4, boxes.begin() + r * 4 + 4);
  }
  roi_align(in.const_view(), ConstTensorView(rows.data() + 1, DataType::Float32, {5, 4}, {5, 1}),
            set.batch_indices.const_view(), out.view(), {});
  EXPECT_TRUE(test::bits_equal(expected, test::to_vector(out.const_view()), "strided rois"));
}

TEST(RoiAlignProperties, StridedViewsMatchPackedAndLeaveMarginsUntouched) {
  const Dims in_sizes{2, 3, 7, 9};
  const Tensor packed = test::random_f32(in_sizes, 303);
  test::StridedBuffer nhwc = test::make_strided(in_sizes, test::nhwc_strides(in_sizes), 0.0f);
  test::copy_into(packed.const_view(), nhwc);
  const RoiSet set = random_rois(6, 2, 9, 7, 304);
  for (const auto reduction : {RoiReduction::Average, RoiReduction::Max}) {
    RoiAlignParams p;
    p.reduction = reduction;
    const auto expected = test::run_roi_align(packed, set.rois, set.batch_indices, 4, 3, p, Backend::Reference);
    const Dims out_sizes{6, 3, 4, 3};
    test::StridedBuffer out = test::make_strided(out_sizes, {80, 1, 20, 5}, -99.0f);  // NHWC, padded pixels
    roi_align(nhwc.cview(), set.rois.const_view(), set.batch_indices.const_view(), out.view(), p);
    EXPECT_TRUE(test::bits_equal(expected, test::to_vector(out.cview()), to_string(reduction)));
    std::size_t untouched = 0;
    for (float v : out.storage) untouched += v == -99.0f;
    EXPECT_EQ(untouched, out.storage.size() - 6 * 3 * 4 * 3);
  }
}

TEST(RoiAlignProperties, BackendsAgreeOverSweep) {
  std::uint32_t seed = 400;
  for (const auto mode : {InterpolationMode::Nearest, InterpolationMode::Linear}) {
    for (const auto reduction : {RoiReduction::Average, RoiReduction::Max}) {
      for (const bool corners : {false, true}) {
        for (const auto& [lo, hi] : {std::pair{1u, 4294967295u}, std::pair{2u, 2u}, std::pair{1u, 3u}}) {
          const Tensor in = test::random_f32({2, 3, 8, 10}, seed++);
          const RoiSet set = random_rois(4, 2, 10, 8, seed++);
          RoiAlignParams p;
          p.interpolation = mode;
          p.reduction = reduction;
          p.align_regions_to_corners = corners;
          p.minimum_samples_per_output = lo;
          p.maximum_samples_per_output = hi;
          p.spatial_scale_x = 0.9f;
          p.out_of_bounds_input_value = -3.0f;
          EXPECT_TRUE(test::bits_equal(
              test::run_roi_align(in, set.rois, set.batch_indices, 3, 2, p, Backend::Reference),
              test::run_roi_align(in, set.rois, set.batch_indices, 3, 2, p, Backend::Auto),
              std::string(to_string(mode)) + " " + to_string(reduction) + (corners ? " corners" : "") +
                  " samples " + std::to_string(lo) + ":" + std::to_string(hi)));
        }
      }
    }
  }
}

}  // namespace
}  // namespace rsz
