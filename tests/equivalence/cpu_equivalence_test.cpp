// The optimized CPU backend against the reference twin: bit-identical over sweeps of data type x mode x scales
// (< 1, 1, non-integer, integer) x offsets x ranks x strided/packed layouts x thread counts (1, 2, 7). Every fast
// path is reached: raw-bit nearest copies (float32 and float16), cached separable linear rows, the doubling W filter
// (W x2 on 21 columns), rows used once filtered and blended in one pass (H x0.5 halving, H x0.45 paired taps), N/C
// plane blending, F16C row conversion (widths above and below 8, odd tails), strided rows, integer-factor nearest
// upsample, rank-5 linear upsample, ROI sample tables.
#include <gtest/gtest.h>

#include <sstream>

#include "equivalence/equivalence_util.h"
#include "golden/golden_util.h"

namespace rsz {
namespace {

using test::Input;
using test::make_input;
using test::run_into;

const int kThreadCounts[] = {1, 2, 7};
const DataType kTypes[] = {DataType::Float32, DataType::Float16};
const InterpolationMode kModes[] = {InterpolationMode::Nearest, InterpolationMode::Linear};

TEST(CpuEquivalence, Resample) {
  const std::array<float, 4> scale_sets[] = {
      {1, 1, 1, 1}, {1, 1, 0.5f, 0.5f}, {1, 1, 2.0f / 3.0f, 0.37f}, {1, 1, 2, 3}, {1, 1, 1.7f, 2.9f},
      {2, 0.5f, 1.25f, 0.8f}, {1.5f, 3, 1, 1}, {1, 1, 3, 2}, {1, 1, 0.45f, 0.7f}};
  const std::pair<float, float> offsets[] = {{0.5f, -0.5f}, {0.0f, 0.0f}, {0.5f, 0.0f}, {0.25f, 1.5f}};
  std::uint32_t seed = 1000;
  int cases = 0;
  for (const DataType type : kTypes) {
    for (const bool channels_last : {false, true}) {
      const Input in = make_input({2, 3, 9, 21}, type, channels_last, seed++);
      for (const auto mode : kModes) {
        for (const auto& scales : scale_sets) {
          for (const auto& [ip, op] : offsets) {
            ResampleParams p;
            p.interpolation = mode;
            p.scales = scales;
            p.input_pixel_offsets = {ip, ip, ip, ip};
            p.output_pixel_offsets = {op, op, op, op};
            const Dims out_sizes = resample_output_sizes(in.sizes, scales);
            const auto expected = run_into(out_sizes, type, false, [&](const TensorView& out) {
              resample(in.view(), out, p, {Backend::Reference, 1});
            });
            for (const int threads : kThreadCounts) {
              for (const bool strided_out : {false, true}) {
                const auto got = run_into(out_sizes, type, strided_out, [&](const TensorView& out) {
                  resample(in.view(), out, p, {Backend::Cpu, threads});
                });
                std::ostringstream context;
                context << to_string(type) << " " << to_string(mode) << (channels_last ? " nhwc" : " nchw")
                        << " scales {" << scales[0] << "," << scales[1] << "," << scales[2] << "," << scales[3]
                        << "} offsets " << ip << "/" << op << " threads " << threads
                        << (strided_out ? " strided-out" : "");
                ASSERT_TRUE(test::bits_equal(expected, got, context.str()));
                ++cases;
              }
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(cases, 2 * 2 * 2 * 9 * 4 * 3 * 2);
}

TEST(CpuEquivalence, Upsample2d) {
  std::uint32_t seed = 2000;
  for (const DataType type : kTypes) {
    for (const Dims& sizes : {Dims{2, 3, 5, 11}, Dims{1, 2, 3, 4, 9}}) {
      const Input in = make_input(sizes, type, false, seed++);
      for (const auto mode : kModes) {
        for (const ScaleSize scale : {ScaleSize{1, 1}, ScaleSize{2, 2}, ScaleSize{3, 1}, ScaleSize{1, 5}}) {
          const Upsample2dParams p{mode, scale};
          const Dims out_sizes = upsample2d_output_sizes(sizes, scale);
          const auto expected = run_into(out_sizes, type, false, [&](const TensorView& out) {
            upsample2d(in.view(), out, p, {Backend::Reference, 1});
          });
          for (const int threads : kThreadCounts) {
            for (const bool strided_out : {false, true}) {
              const auto got = run_into(out_sizes, type, strided_out, [&](const TensorView& out) {
                upsample2d(in.view(), out, p, {Backend::Cpu, threads});
              });
              ASSERT_TRUE(test::bits_equal(expected, got,
                                           std::string(to_string(type)) + " " + to_string(mode) + " rank " +
                                               std::to_string(sizes.size()) + " scale " +
                                               std::to_string(scale.height) + "x" + std::to_string(scale.width) +
                                               " threads " + std::to_string(threads)));
            }
          }
        }
      }
    }
  }
}

// Outputs of 16 MiB and more are written with non-temporal stores (cpu/rows.h kStreamOutputBytes): the same bits,
// for every path that streams (nearest rows, linear rows with and without an H blend, plane blending, float16
// narrowing, integer-factor nearest upsample), with row lengths that start streamed rows off 16-byte boundaries.
TEST(CpuEquivalence, LargeOutputsWrittenWithStreamingStores) {
  struct Case {
    DataType type;
    Dims in_sizes;
    std::array<float, 4> scales;
  };
  const Case cases[] = {
      {DataType::Float32, {1, 2, 700, 1021}, {1, 1, 2, 2}},         // 1 x 2 x 1400 x 2042 float32: 22.9 MB
      {DataType::Float16, {1, 2, 1100, 1001}, {1, 1, 2, 2}},        // 1 x 2 x 2200 x 2002 float16: 17.6 MB
      {DataType::Float32, {2, 3, 500, 703}, {0.5f, 1.5f, 1.7f, 2}},  // N and C blended: 1 x 4 x 850 x 1406: 19.1 MB
  };
  std::uint32_t seed = 4000;
  for (const Case& c : cases) {
    const Input in = make_input(c.in_sizes, c.type, false, seed++);
    for (const auto mode : kModes) {
      ResampleParams p;
      p.interpolation = mode;
      p.scales = c.scales;
      const Dims out_sizes = resample_output_sizes(c.in_sizes, c.scales);
      const auto expected = run_into(out_sizes, c.type, false, [&](const TensorView& out) {
        resample(in.view(), out, p, {Backend::Reference, 1});
      });
      for (const int threads : {1, 2}) {
        const auto got = run_into(out_sizes, c.type, false, [&](const TensorView& out) {
          ASSERT_GE(out.element_count() * static_cast<std::int64_t>(element_size(c.type)), std::int64_t{16} << 20);
          resample(in.view(), out, p, {Backend::Cpu, threads});
        });
        ASSERT_TRUE(test::bits_equal(expected, got,
                                     std::string("resample ") + to_string(c.type) + " " + to_string(mode) +
                                         " to " + dims_to_string(out_sizes) + " threads " + std::to_string(threads)));
      }
    }
  }
  const Input in = make_input({1, 3, 700, 1001}, DataType::Float32, false, seed++);
  const Upsample2dParams p{InterpolationMode::Nearest, {2, 2}};
  const Dims out_sizes = upsample2d_output_sizes(in.sizes, p.scale_size);
  const auto expected = run_into(out_sizes, DataType::Float32, false, [&](const TensorView& out) {
    upsample2d(in.view(), out, p, {Backend::Reference, 1});
  });
  for (const int threads : {1, 2}) {
    const auto got = run_into(out_sizes, DataType::Float32, false, [&](const TensorView& out) {
      upsample2d(in.view(), out, p, {Backend::Cpu, threads});
    });
    ASSERT_TRUE(test::bits_equal(expected, got, "upsample2d nearest x2 threads " + std::to_string(threads)));
  }
}

TEST(CpuEquivalence, RoiAlign) {
  std::uint32_t seed = 3000;
  for (const DataType type : kTypes) {
    for (const auto& [channels_last, channels] : {std::pair{false, 5}, std::pair{true, 5}, std::pair{false, 12},
                                                  std::pair{true, 33}}) {
      // 12 and 33 channels take the channels-last pooling path; 5 the per-plane one.
      const Input in = make_input({2, channels, 12, 17}, type, channels_last, seed++);
      // Boxes inside, across the edges, inverted, empty, tiny and large.
      const Tensor boxes32 = test::make_f32(
          {7, 4}, {1, 1, 15, 10, -3, -2, 8, 6, 14, 9, 2, 3, 5, 5, 5, 5, 3.2f, 4.1f, 3.9f, 4.3f, -6, -6, 25, 20, 16, 11,
                   19, 14});
      const Tensor boxes = test::convert(boxes32.view(), type);
      const Tensor batch = test::make_u32({7}, {0, 1, 1, 0, 1, 0, 1});
      for (const auto mode : kModes) {
        for (const auto reduction : {RoiReduction::Average, RoiReduction::Max}) {
          for (const bool corners : {false, true}) {
            for (const auto& [lo, hi] : {std::pair{1u, 4294967295u}, std::pair{2u, 2u}, std::pair{1u, 3u}}) {
              RoiAlignParams p;
              p.interpolation = mode;
              p.reduction = reduction;
              p.align_regions_to_corners = corners;
              p.minimum_samples_per_output = lo;
              p.maximum_samples_per_output = hi;
              p.spatial_scale_x = 0.75f;
              p.out_of_bounds_input_value = -2.5f;
              const Dims out_sizes{7, channels, 3, 4};
              const auto expected = run_into(out_sizes, type, false, [&](const TensorView& out) {
                roi_align(in.view(), boxes.view(), batch.view(), out, p, {Backend::Reference, 1});
              });
              for (const int threads : kThreadCounts) {
                for (const bool strided_out : {false, true}) {
                  const auto got = run_into(out_sizes, type, strided_out, [&](const TensorView& out) {
                    roi_align(in.view(), boxes.view(), batch.view(), out, p, {Backend::Cpu, threads});
                  });
                  ASSERT_TRUE(test::bits_equal(
                      expected, got,
                      std::string(to_string(type)) + " " + to_string(mode) + " " + to_string(reduction) +
                          (corners ? " corners" : "") + " samples " + std::to_string(lo) + ":" + std::to_string(hi) +
                          (channels_last ? " nhwc" : " nchw") + " channels " + std::to_string(channels) +
                          " threads " + std::to_string(threads)));
                }
              }
            }
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace rsz
