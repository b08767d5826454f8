// The optimized CPU backend against the reference twin: bit-identical over sweeps of data type x mode x scales
// (< 1, 1, non-integer, integer) x offsets x ranks x strided/packed layouts x thread counts (1, 2, 7). Every fast
// path is reached: raw-bit nearest copies (float32 and float16), cached separable linear rows, the doubling W filter
// (W x2 on 21 columns), rows used once filtered and blended in one pass (H x0.5 halving, H x0.45 paired taps), N/C
// plane blending, F16C row conversion (widths above and below 8, odd tails), strided rows, integer-factor nearest
// upsample, rank-5 linear upsample, ROI sample tables.
#include <gtest/gtest.h>

#include <cstring>
#include <sstream>

#include "equivalence/equivalence_util.h"
#include "golden/golden_util.h"

namespace rsz {
namespace {

class Equivalence : public ::testing::TestWithParam<Backend> {};

using test::Input;
using test::make_input;
using test::run_into;

const int kThreadCounts[] = {1, 2, 7};
const DataType kTypes[] = {DataType::Float32, DataType::Float16};
const InterpolationMode kModes[] = {InterpolationMode::Nearest, InterpolationMode::Linear};

TEST_P(Equivalence, Resample) {
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
                  resample(in.view(), out, p, {GetParam(), threads});
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

// Special values in the data (quiet and signalling NaN with payloads, +-Inf, +-0, denormals, the largest finite
// values) through every mode of resample and upsample2d: the CPU backend gives the reference's exact bits, NaNs
// included. Nearest is a selection and copies every bit (a signalling NaN stays signalling); linear stores every
// NaN as the canonical one (SEMANTICS.md §0). The shapes reach the fast paths: rows used once (H x0.5, x0.45),
// the doubling W filter (W x2 on 70 columns), N and C plane blending, float16 narrowing with and without F16C
// widths (19, 70), raw-bit nearest rows and integer-factor upsampling.
TEST_P(Equivalence, SpecialValuesKeepTheReferenceBits) {
  int cases = 0;
  std::uint32_t seed = 3000;
  for (const DataType type : kTypes) {
    for (const bool channels_last : {false, true}) {
      for (const Dims& sizes : {Dims{1, 3, 7, 19}, Dims{2, 3, 9, 70}}) {
        Input in = make_input(sizes, type, channels_last, seed++);
        test::sprinkle_special_values(in, sizes[3] == 19 ? 5 : 7);
        for (const auto mode : kModes) {
          for (const std::array<float, 4> scales :
               {std::array<float, 4>{1, 1, 1, 1}, {1, 1, 2, 2}, {1, 1, 0.5f, 0.5f}, {1, 1, 1.7f, 0.6f}, {1, 2, 3, 1},
                {1.5f, 1, 0.45f, 2}, {1, 0.7f, 2, 1.3f}}) {
            ResampleParams p;
            p.interpolation = mode;
            p.scales = scales;
            const Dims out_sizes = resample_output_sizes(in.sizes, scales);
            const auto expected = test::run_into_bytes(out_sizes, type, [&](const TensorView& out) {
              resample(in.view(), out, p, {Backend::Reference, 1});
            });
            for (const int threads : {1, 2, 7}) {
              const auto got = test::run_into_bytes(out_sizes, type, [&](const TensorView& out) {
                resample(in.view(), out, p, {GetParam(), threads});
              });
              const std::size_t first = test::first_difference(expected, got, type);
              ASSERT_EQ(first, expected.size())
                  << "resample " << to_string(type) << " " << to_string(mode) << " " << dims_to_string(sizes)
                  << (channels_last ? " nhwc" : " nchw") << " scales " << scales[0] << "x" << scales[1] << "x"
                  << scales[2] << "x" << scales[3] << " threads " << threads << ": element "
                  << first / element_size(type) << " " << test::hex_bytes(expected, first, element_size(type))
                  << " vs " << test::hex_bytes(got, first, element_size(type));
              ++cases;
            }
          }
          for (const std::uint32_t f : {1u, 2u, 3u}) {
            Upsample2dParams p;
            p.interpolation = mode;
            p.scale_size = {f, f + 1};
            const Dims out_sizes = upsample2d_output_sizes(in.sizes, p.scale_size);
            const auto expected = test::run_into_bytes(out_sizes, type, [&](const TensorView& out) {
              upsample2d(in.view(), out, p, {Backend::Reference, 1});
            });
            const auto got = test::run_into_bytes(out_sizes, type, [&](const TensorView& out) {
              upsample2d(in.view(), out, p, {GetParam(), 2});
            });
            const std::size_t first = test::first_difference(expected, got, type);
            ASSERT_EQ(first, expected.size())
                << "upsample2d " << to_string(type) << " " << to_string(mode) << " x" << f << " "
                << dims_to_string(sizes) << ": " << test::hex_bytes(expected, first, element_size(type)) << " vs "
                << test::hex_bytes(got, first, element_size(type));
            if (mode == InterpolationMode::Linear) {
              for (std::size_t at = 0; at < got.size(); at += element_size(type)) {
                ASSERT_FALSE(test::is_non_canonical_nan(got, at, element_size(type)))
                    << "upsample2d linear element " << at / element_size(type);
              }
            }
            ++cases;
          }
        }
      }
    }
  }
  EXPECT_EQ(cases, 2 * 2 * 2 * 2 * (7 * 3 + 3));
}

// Computed paths store the canonical NaN (float32 0x7fc00000, float16 0x7e00) in every backend, also where a zero
// weight passes a value through unchanged (float16 widening in software keeps a signalling NaN's payload while F16C
// quiets it; float32 passes it untouched) and where Inf - Inf makes the x86 default NaN (0xffc00000).
TEST_P(Equivalence, ComputedNanIsCanonical) {
  for (const Backend backend : {Backend::Reference, GetParam()}) {
    for (const int threads : {1, 2}) {
      // 1 x 1 x 2 x 12: signalling and quiet NaNs of both signs, and +Inf next to -Inf.
      std::vector<std::uint32_t> f(24, 0x3f800000u);
      f[0] = 0x7f800001u;
      f[1] = 0xff812345u;
      f[2] = 0xffc00001u;
      f[4] = 0x7f800000u;
      f[5] = 0xff800000u;
      std::vector<std::uint16_t> h(24, 0x3c00u);
      h[0] = 0x7c01u;
      h[1] = 0xfd23u;
      h[2] = 0xfe01u;
      h[4] = 0x7c00u;
      h[5] = 0xfc00u;
      for (const auto& [scale, count] : {std::pair{1.0f, 24}, std::pair{2.0f, 96}}) {
        ResampleParams p;
        p.interpolation = InterpolationMode::Linear;
        p.scales = {1, 1, scale, scale};
        const Dims out_sizes{1, 1, static_cast<std::int64_t>(2 * scale), static_cast<std::int64_t>(12 * scale)};
        std::vector<std::uint32_t> f_out(static_cast<std::size_t>(count));
        resample(ConstTensorView(f.data(), DataType::Float32, {1, 1, 2, 12}),
                 TensorView(f_out.data(), DataType::Float32, out_sizes), p, {backend, threads});
        std::vector<std::uint16_t> h_out(static_cast<std::size_t>(count));
        resample(ConstTensorView(h.data(), DataType::Float16, {1, 1, 2, 12}),
                 TensorView(h_out.data(), DataType::Float16, out_sizes), p, {backend, threads});
        int nans = 0;
        for (std::size_t i = 0; i < f_out.size(); ++i) {
          if ((f_out[i] & 0x7fffffffu) > 0x7f800000u) {
            ++nans;
            EXPECT_EQ(f_out[i], 0x7fc00000u) << to_string(backend) << " scale " << scale << " float32 element " << i;
          }
          if ((h_out[i] & 0x7fffu) > 0x7c00u) {
            EXPECT_EQ(h_out[i], 0x7e00u) << to_string(backend) << " scale " << scale << " float16 element " << i;
          }
        }
        EXPECT_GE(nans, 3);
        if (scale == 1.0f) {  // every weight is 0: the pass-through
          EXPECT_EQ(f_out[0], 0x7fc00000u);
          EXPECT_EQ(h_out[0], 0x7e00u);
          EXPECT_EQ(f_out[4], 0x7f800000u);
          EXPECT_EQ(h_out[5], 0xfc00u);
        }
      }
      // upsample2d linear x2 (the same rule, through its own entry point).
      std::vector<std::uint16_t> u_out(96);
      upsample2d(ConstTensorView(h.data(), DataType::Float16, {1, 1, 2, 12}),
                 TensorView(u_out.data(), DataType::Float16, {1, 1, 4, 24}),
                 Upsample2dParams{InterpolationMode::Linear, {2, 2}}, {backend, threads});
      EXPECT_EQ(u_out[0], 0x7e00u) << to_string(backend);
      // roi_align: a single nearest sample with max reduction passes the value through; so does an out-of-bounds
      // value. Plane path (1 channel) and channels-last path (8 channels).
      for (const std::int64_t channels : {1, 8}) {
        std::vector<std::uint32_t> map(static_cast<std::size_t>(channels) * 4, 0x7f800001u);
        std::vector<std::uint16_t> map16(map.size(), 0x7c01u);
        const float boxes[8] = {0, 0, 0, 0, 5, 5, 6, 6};
        const Tensor boxes16 = test::convert(ConstTensorView(boxes, DataType::Float32, {2, 4}), DataType::Float16);
        const std::uint32_t batch[2] = {0, 0};
        for (const auto reduction : {RoiReduction::Max, RoiReduction::Average}) {
          RoiAlignParams p;
          p.interpolation = InterpolationMode::Nearest;
          p.reduction = reduction;
          p.minimum_samples_per_output = 1;
          p.maximum_samples_per_output = 1;
          const std::uint32_t oob_bits = 0xff812345u;
          std::memcpy(&p.out_of_bounds_input_value, &oob_bits, sizeof oob_bits);
          const auto n = static_cast<std::size_t>(2 * channels);
          std::vector<std::uint32_t> out(n, 0);
          roi_align(ConstTensorView(map.data(), DataType::Float32, {1, channels, 2, 2}),
                    ConstTensorView(boxes, DataType::Float32, {2, 4}), ConstTensorView(batch, DataType::UInt32, {2}),
                    TensorView(out.data(), DataType::Float32, {2, channels, 1, 1}), p, {backend, threads});
          std::vector<std::uint16_t> out16(n, 0);
          roi_align(ConstTensorView(map16.data(), DataType::Float16, {1, channels, 2, 2}), boxes16.const_view(),
                    ConstTensorView(batch, DataType::UInt32, {2}),
                    TensorView(out16.data(), DataType::Float16, {2, channels, 1, 1}), p, {backend, threads});
          for (std::size_t i = 0; i < n; ++i) {
            EXPECT_EQ(out[i], 0x7fc00000u) << to_string(backend) << " " << to_string(reduction) << " C " << channels
                                           << " element " << i;
            EXPECT_EQ(out16[i], 0x7e00u) << to_string(backend) << " " << to_string(reduction) << " C " << channels
                                         << " element " << i;
          }
        }
      }
    }
  }
}

// Nearest copies bits: a signalling NaN comes out signalling, in both backends and both types.
TEST_P(Equivalence, NearestCopiesSignallingNanBits) {
  for (const Backend backend : {Backend::Reference, GetParam()}) {
    const std::uint16_t h[4] = {0x7c01u, 0xfd23u, 0x3c00u, 0x0001u};
    std::uint16_t h_out[16] = {};
    ResampleParams p;
    p.interpolation = InterpolationMode::Nearest;
    p.scales = {1, 1, 2, 2};
    resample(ConstTensorView(h, DataType::Float16, {1, 1, 2, 2}), TensorView(h_out, DataType::Float16, {1, 1, 4, 4}),
             p, {backend, 1});
    EXPECT_EQ(h_out[0], 0x7c01u) << to_string(backend);
    EXPECT_EQ(h_out[3], 0xfd23u) << to_string(backend);
    const std::uint32_t f[4] = {0x7f800001u, 0xff812345u, 0x3f800000u, 0x00000001u};
    std::uint32_t f_out[16] = {};
    resample(ConstTensorView(f, DataType::Float32, {1, 1, 2, 2}), TensorView(f_out, DataType::Float32, {1, 1, 4, 4}),
             p, {backend, 1});
    EXPECT_EQ(f_out[0], 0x7f800001u) << to_string(backend);
    EXPECT_EQ(f_out[3], 0xff812345u) << to_string(backend);
    std::uint16_t u_out[6] = {};
    Upsample2dParams up;
    up.scale_size = {1, 3};
    upsample2d(ConstTensorView(h, DataType::Float16, {1, 1, 1, 2}), TensorView(u_out, DataType::Float16, {1, 1, 1, 6}),
               up, {backend, 1});
    EXPECT_EQ(u_out[0], 0x7c01u) << to_string(backend);
    EXPECT_EQ(u_out[5], 0xfd23u) << to_string(backend);
  }
}

TEST_P(Equivalence, Upsample2d) {
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
                upsample2d(in.view(), out, p, {GetParam(), threads});
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
TEST_P(Equivalence, LargeOutputsWrittenWithStreamingStores) {
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
          resample(in.view(), out, p, {GetParam(), threads});
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
      upsample2d(in.view(), out, p, {GetParam(), threads});
    });
    ASSERT_TRUE(test::bits_equal(expected, got, "upsample2d nearest x2 threads " + std::to_string(threads)));
  }
}

TEST_P(Equivalence, RoiAlign) {
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
                    roi_align(in.view(), boxes.view(), batch.view(), out, p, {GetParam(), threads});
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

INSTANTIATE_TEST_SUITE_P(Registered, Equivalence, ::testing::ValuesIn(test::backends_under_test()),
                         test::backend_test_name);

}  // namespace
}  // namespace rsz
