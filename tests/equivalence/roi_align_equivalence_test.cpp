// The optimized CPU ROI_ALIGN against the reference twin, bit-identical over a sweep that reaches every path of
// core/src/cpu/roi_align_cpu.cpp: few channels (1, 3: the separable plane path with its two-row cache, vector and
// tail columns, all-inside and partly-outside x samples) and many (8, 33, 64: the channels-last path with equal
// padded blocks, the direct float32 transposes from NCHW input and into packed output, the widened copy for float16
// and NHWC input, per-plane and per-row output stores), float32 and float16, average and max, linear and nearest,
// fixed and adaptive sampling, boxes inside, in the [-1, 0) band, beyond it, inverted, zero-size and huge, batch
// indices > 0, packed and strided outputs, 1, 2, 7 and 16 threads.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <sstream>
#include <thread>

#include "rsz/float16.h"
#include "rsz/roi_align.h"
#include "equivalence/equivalence_util.h"
#include "support/test_util.h"

namespace rsz {
namespace {

class RoiAlignEquivalence : public ::testing::TestWithParam<Backend> {};

using test::Input;
using test::make_input;
using test::run_into;

// Boxes [x1, y1, x2, y2] in input pixels before the spatial scale (0.5 on x, 0.75 on y below) over a 13 x 21 map:
// inside, crossing each edge, in the [-1, 0) band after scaling, entirely beyond it, inverted on one or both axes,
// zero-size, sub-pixel (zoom-in: rows reused by many y samples), and much larger than the map (zoom-out).
const std::vector<float> kBoxes = {
    2, 2, 30, 14,      // inside
    -1.6f, -1.2f, 9, 7,  // starts in the [-1, 0) band
    -20, -9, -3, -2,   // entirely before the map
    30, 8, 60, 30,     // across the right and bottom edges and beyond
    36, 12, 4, 3,      // inverted on both axes
    8, 3, 26, 11,      // inside, some exact sample positions
    10, 10, 10, 10,    // zero-size
    12, 5, 12.6f, 5.4f,  // sub-pixel
    -30, -20, 80, 40,  // much larger than the map
    5, 14, 25, 2,      // inverted on y only
};
const std::vector<std::uint32_t> kBatch = {0, 2, 1, 2, 0, 1, 2, 0, 1, 2};

TEST_P(RoiAlignEquivalence, Sweep) {
  const Dims out_shapes[] = {{10, 0, 3, 5}, {10, 0, 2, 11}};  // channel count filled in below
  std::uint32_t seed = 4000;
  int cases = 0;
  for (const DataType type : {DataType::Float32, DataType::Float16}) {
    const Tensor boxes = test::convert(test::make_f32({10, 4}, kBoxes).view(), type);
    const Tensor batch = test::make_u32({10}, kBatch);
    for (const std::int64_t channels : {1, 3, 8, 33, 64}) {
      for (const bool nhwc : {false, true}) {
        const Input in = make_input({3, channels, 13, 21}, type, nhwc, seed++);
        for (const auto mode : {InterpolationMode::Linear, InterpolationMode::Nearest}) {
          for (const auto reduction : {RoiReduction::Average, RoiReduction::Max}) {
            for (const auto& [lo, hi] : {std::pair{2u, 2u}, std::pair{1u, 4294967295u}, std::pair{1u, 3u}}) {
              for (Dims out_sizes : out_shapes) {
                out_sizes[1] = channels;
                RoiAlignParams p;
                p.interpolation = mode;
                p.reduction = reduction;
                p.minimum_samples_per_output = lo;
                p.maximum_samples_per_output = hi;
                p.spatial_scale_x = 0.5f;
                p.spatial_scale_y = 0.75f;
                p.out_of_bounds_input_value = -2.5f;
                p.align_regions_to_corners = out_sizes[3] == 11 && lo == 1 && hi == 3;
                const auto expected = run_into(out_sizes, type, false, [&](const TensorView& out) {
                  roi_align(in.view(), boxes.view(), batch.view(), out, p, {Backend::Reference, 1});
                });
                for (const int threads : {1, 2, 7, 16}) {
                  for (const bool strided : {false, true}) {
                    const auto got = run_into(out_sizes, type, strided, [&](const TensorView& out) {
                      roi_align(in.view(), boxes.view(), batch.view(), out, p, {GetParam(), threads});
                    });
                    std::ostringstream context;
                    context << to_string(type) << " " << to_string(mode) << " " << to_string(reduction) << " C "
                            << channels << (nhwc ? " nhwc" : " nchw") << " samples " << lo << ":" << hi << " out "
                            << out_sizes[2] << "x" << out_sizes[3] << (p.align_regions_to_corners ? " corners" : "")
                            << " threads " << threads << (strided ? " strided-out" : "");
                    ASSERT_TRUE(test::bits_equal(expected, got, context.str()));
                    ++cases;
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(cases, 2 * 5 * 2 * 2 * 2 * 3 * 2 * 4 * 2);
}

// Special values: an infinite out-of-bounds value and infinities / NaN in the map must give the reference's
// results (a zero weight never lets the second tap leak in; max skips a NaN after the first sample).
TEST_P(RoiAlignEquivalence, SpecialValues) {
  for (const DataType type : {DataType::Float32, DataType::Float16}) {
    for (const std::int64_t channels : {2, 16}) {
      Tensor values = test::random_f32({1, channels, 6, 9}, 77, -1.0f, 1.0f);
      std::vector<float> v = test::to_vector(values.view());
      for (std::size_t i = 0; i < v.size(); i += 7) v[i] = (i / 7) % 3 == 0 ? 1.0f / 0.0f : (i / 7) % 3 == 1 ? -1.0f / 0.0f : 0.0f / 0.0f;
      const Tensor in = test::convert(test::make_f32({1, channels, 6, 9}, v).view(), type);
      const Tensor boxes = test::convert(test::make_f32({3, 4}, {-3, -2, 12, 9, 1, 1, 7, 4, 8, 5, 0, 0}).view(), type);
      const Tensor batch = test::make_u32({3}, {0, 0, 0});
      for (const auto mode : {InterpolationMode::Linear, InterpolationMode::Nearest}) {
        for (const auto reduction : {RoiReduction::Average, RoiReduction::Max}) {
          RoiAlignParams p;
          p.interpolation = mode;
          p.reduction = reduction;
          p.out_of_bounds_input_value = -1.0f / 0.0f;
          const Dims out_sizes{3, channels, 4, 9};
          const auto expected = run_into(out_sizes, type, false, [&](const TensorView& out) {
            roi_align(in.view(), boxes.view(), batch.view(), out, p, {Backend::Reference, 1});
          });
          for (const int threads : {1, 2}) {
            const auto got = run_into(out_sizes, type, false, [&](const TensorView& out) {
              roi_align(in.view(), boxes.view(), batch.view(), out, p, {GetParam(), threads});
            });
            ASSERT_TRUE(test::bits_equal(expected, got,
                                         std::string(to_string(type)) + " " + to_string(mode) + " " +
                                             to_string(reduction) + " C " + std::to_string(channels)));
          }
        }
      }
    }
  }
}

// Special values in the map (quiet and signalling NaN with payloads, +-Inf, +-0, denormals, the largest finite
// values) and in out_of_bounds_input_value, and unusual boxes (huge: up to the type's largest finite value with finite
// extents, inverted, zero-area, fully outside, straddling the edge, denormal and -0 corners), on the plane path
// (5 channels) and the channels-last path (16): the reference's exact bits, NaNs compared bit for bit (every
// computed NaN is the canonical one, SEMANTICS.md §0).
TEST_P(RoiAlignEquivalence, SpecialValuesAndUnusualBoxes) {
  int cases = 0;
  for (const DataType type : {DataType::Float32, DataType::Float16}) {
    // The largest finite value of the type, and half of it (so that -half .. half has a finite float32 extent).
    const float max = type == DataType::Float32 ? 3.4028234663852886e38f : 65504.0f;
    const float half = type == DataType::Float32 ? 1.7e38f : 65504.0f;
    const Tensor boxes = test::convert(test::make_f32({10, 4}, {-half, -half, half, half,  // huge, symmetric
                                                                0, 0, max, max,            // huge, one-sided
                                                                half, 2, -half, 3,         // huge and inverted on x
                                                                7, 5, 1, 1,                // inverted
                                                                3, 2, 3, 2,                // zero area
                                                                40, 40, 60, 50,            // outside
                                                                -4, -3, 2, 2,              // straddling
                                                                0.5f, 0.25f, 8.5f, 5.75f,  // inside
                                                                -0.0f, 1e-45f, 4, -0.0f,   // -0 and denormal corners
                                                                -max, -max, -max, -max})   // a point far outside
                                                   .view(),
                                       type);
    const Tensor batch = test::make_u32({10}, {0, 1, 0, 1, 0, 1, 1, 0, 1, 0});
    for (const std::int64_t channels : {5, 16}) {
      for (const bool channels_last : {false, true}) {
        test::Input in = test::make_input({2, channels, 6, 9}, type, channels_last, 91);
        test::sprinkle_special_values(in, 3);
        for (const std::uint32_t oob_bits : {0x3e800000u, 0x7f800001u, 0xff800000u}) {  // 0.25, sNaN, -Inf
          float oob = 0.0f;
          std::memcpy(&oob, &oob_bits, sizeof oob);
          for (const auto mode : {InterpolationMode::Linear, InterpolationMode::Nearest}) {
            for (const auto reduction : {RoiReduction::Average, RoiReduction::Max}) {
              for (const bool corners : {false, true}) {
                RoiAlignParams p;
                p.interpolation = mode;
                p.reduction = reduction;
                p.align_regions_to_corners = corners;
                p.minimum_samples_per_output = 1;
                p.maximum_samples_per_output = 3;  // the huge boxes would need ~1e38 samples otherwise
                p.out_of_bounds_input_value = oob;
                const Dims out_sizes{10, channels, 3, 4};
                const auto expected = test::run_into_bytes(out_sizes, type, [&](const TensorView& out) {
                  roi_align(in.view(), boxes.view(), batch.view(), out, p, {Backend::Reference, 1});
                });
                for (const int threads : {1, 2}) {
                  const auto got = test::run_into_bytes(out_sizes, type, [&](const TensorView& out) {
                    roi_align(in.view(), boxes.view(), batch.view(), out, p, {GetParam(), threads});
                  });
                  const std::size_t size = element_size(type);
                  const std::size_t first = test::first_difference(expected, got, type);
                  const std::size_t element = first / size;
                  const std::int64_t per_roi = channels * 12;
                  ASSERT_EQ(first, expected.size())
                      << to_string(type) << " " << to_string(mode) << " " << to_string(reduction)
                      << (corners ? " corners" : "") << (channels_last ? " nhwc" : " nchw") << " C " << channels
                      << " oob " << test::hex_bytes(std::vector<unsigned char>(
                                                        reinterpret_cast<const unsigned char*>(&oob_bits),
                                                        reinterpret_cast<const unsigned char*>(&oob_bits) + 4),
                                                    0, 4)
                      << " threads " << threads << ": first difference at element " << element << " (ROI "
                      << static_cast<std::int64_t>(element) / per_roi << ", channel "
                      << static_cast<std::int64_t>(element) / 12 % channels << "): "
                      << test::hex_bytes(expected, first, size) << " vs " << test::hex_bytes(got, first, size);
                  for (std::size_t at = 0; at < got.size(); at += size) {
                    ASSERT_FALSE(test::is_non_canonical_nan(got, at, size)) << "element " << at / size;
                  }
                  ++cases;
                }
              }
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(cases, 2 * 2 * 2 * 3 * 2 * 2 * 2 * 2);
}

// ROIs whose sample tables are huge (adaptive sampling over boxes millions of pixels wide, within the sample budget):
// the CPU backend tables them in groups that fit its cap (cpu/roi_align_cpu.cpp kMaxTableEntries, 2^22 entries) and
// computes a ROI too large for it alone through the reference's sample-by-sample loop. The reference's bits, for
// both paths (3 and 8 channels), packed and strided outputs.
TEST_P(RoiAlignEquivalence, RoisWithHugeSampleTables) {
  // With spatial_scale_x = 100 (x coordinates stay within float16's range): x extents 1.5e6 (tables of 1.5e6 + 1
  // entries: two per group) and about 4.5e6 (over the cap alone); y extent 1.
  const std::vector<float> corners = {0.01f, 1, 0.07f, 2,      // small
                                      -7500, 2, 7500, 3,       // grouped
                                      -7500, 3, 7500, 4,       // grouped
                                      -22500, 1, 22500, 2,     // alone: the reference loop
                                      7500, 2, -7500, 3,       // grouped, inverted
                                      0, 0, 0.09f, 6};         // small
  const Tensor batch = test::make_u32({6}, {0, 1, 0, 1, 1, 0});
  for (const DataType type : {DataType::Float32, DataType::Float16}) {
    const Tensor boxes = test::convert(test::make_f32({6, 4}, corners).view(), type);
    for (const std::int64_t channels : {3, 8}) {
      test::Input in = make_input({2, channels, 6, 9}, type, false, 4200);
      test::sprinkle_special_values(in, 11);
      RoiAlignParams p;
      p.out_of_bounds_input_value = 0.5f;
      p.spatial_scale_x = 100.0f;
      const Dims out_sizes{6, channels, 1, 1};
      const auto expected = run_into(out_sizes, type, false, [&](const TensorView& out) {
        roi_align(in.view(), boxes.view(), batch.view(), out, p, {Backend::Reference, 1});
      });
      for (const int threads : {1, 2}) {
        for (const bool strided : {false, true}) {
          const auto got = run_into(out_sizes, type, strided, [&](const TensorView& out) {
            roi_align(in.view(), boxes.view(), batch.view(), out, p, {GetParam(), threads});
          });
          ASSERT_TRUE(test::bits_equal(expected, got,
                                       std::string(to_string(type)) + " C " + std::to_string(channels) + " threads " +
                                           std::to_string(threads) + (strided ? " strided-out" : "")));
        }
      }
    }
  }
}

// Outputs of 16 MiB and more are written with streaming stores (cpu/rows.h kStreamOutputBytes): the same bits for
// float32 and float16, with planes of 15 x 15 (900 bytes, so streamed runs start off 16-byte boundaries), on the
// channels-last path (40 channels: two blocks per ROI) and the plane path (3 channels).
TEST_P(RoiAlignEquivalence, LargeOutputsWrittenWithStreamingStores) {
  std::uint32_t seed = 4100;
  for (const auto& [type, channels] : {std::pair{DataType::Float32, std::int64_t{40}},
                                       std::pair{DataType::Float16, std::int64_t{40}},
                                       std::pair{DataType::Float32, std::int64_t{3}},
                                       std::pair{DataType::Float16, std::int64_t{3}}}) {
    const std::int64_t roi_bytes = channels * 15 * 15 * static_cast<std::int64_t>(element_size(type));
    const std::int64_t count = ((std::int64_t{17} << 20) + roi_bytes - 1) / roi_bytes;
    std::vector<float> corners;
    std::vector<std::uint32_t> indices;
    for (std::int64_t r = 0; r < count; ++r) {
      const auto& box = kBoxes;
      const std::size_t k = static_cast<std::size_t>(r % 10) * 4;
      const float shift = static_cast<float>(r % 7) - 3.0f;
      corners.insert(corners.end(), {box[k] + shift, box[k + 1] - shift, box[k + 2] + shift, box[k + 3]});
      indices.push_back(kBatch[static_cast<std::size_t>(r % 10)]);
    }
    const Tensor boxes = test::convert(test::make_f32({count, 4}, corners).view(), type);
    const Tensor batch = test::make_u32({count}, indices);
    const Input in = make_input({3, channels, 13, 21}, type, false, seed++);
    const Dims out_sizes{count, channels, 15, 15};
    for (const auto reduction : {RoiReduction::Average, RoiReduction::Max}) {
      RoiAlignParams p;
      p.reduction = reduction;
      p.spatial_scale_x = 0.5f;
      p.spatial_scale_y = 0.75f;
      const auto expected = run_into(out_sizes, type, false, [&](const TensorView& out) {
        roi_align(in.view(), boxes.view(), batch.view(), out, p, {Backend::Reference, 1});
      });
      for (const int threads : {1, 2}) {
        const auto got = run_into(out_sizes, type, false, [&](const TensorView& out) {
          ASSERT_GE(out.element_count() * static_cast<std::int64_t>(element_size(type)), std::int64_t{16} << 20);
          roi_align(in.view(), boxes.view(), batch.view(), out, p, {GetParam(), threads});
        });
        ASSERT_TRUE(test::bits_equal(expected, got,
                                     std::string("streamed ") + to_string(type) + " C " + std::to_string(channels) + " " +
                                         to_string(reduction) +
                                         " threads " + std::to_string(threads)));
      }
    }
  }
}

// Maps of many channel blocks, whose copies take turns in the ring of two (a block's copy waits until the block
// before it in its slot is pooled: 4 blocks of 25 channels), and a map whose copy is larger than the scratch kept
// between calls (one block of 9 channels padded to 16 over 1100 x 1100: 77 MB, allocated for the call).
TEST_P(RoiAlignEquivalence, BlocksTakeTurnsInTheRingOfCopies) {
  const std::vector<float> corners = {10, 20, 40, 30, -5, 30, 6, 53, 25, 25, 25.5f, 26, 0, 0, 49, 39,
                                      100, 200, 1000, 900, -5, 1050, 60, 1130, 250, 250, 251, 252, 0, 0, 1099, 1099};
  std::uint32_t seed = 4200;
  for (const auto& [sizes, first] : {std::pair{Dims{1, 100, 40, 50}, 0}, std::pair{Dims{1, 192, 40, 50}, 0},
                                     std::pair{Dims{1, 9, 1100, 1100}, 4}}) {
    const Input in = make_input(sizes, DataType::Float32, false, seed++);
    const Tensor boxes = test::make_f32({4, 4}, std::vector<float>(corners.begin() + first * 4,
                                                                   corners.begin() + first * 4 + 16));
    const Tensor batch = test::make_u32({4}, {0, 0, 0, 0});
    const Dims out_sizes{4, sizes[1], 3, 4};
    RoiAlignParams p;
    p.minimum_samples_per_output = p.maximum_samples_per_output = 2;
    const auto expected = run_into(out_sizes, DataType::Float32, false, [&](const TensorView& out) {
      roi_align(in.view(), boxes.view(), batch.view(), out, p, {Backend::Reference, 1});
    });
    for (const int threads : {1, 2, 3, 4, 7, 8, 16}) {
      const auto got = run_into(out_sizes, DataType::Float32, false, [&](const TensorView& out) {
        roi_align(in.view(), boxes.view(), batch.view(), out, p, {GetParam(), threads});
      });
      ASSERT_TRUE(test::bits_equal(expected, got, "C " + std::to_string(sizes[1]) + ", threads " +
                                                      std::to_string(threads)));
    }
  }
}

// Where every thread gets four blocks or more (the ring path), each keeps a ring of as many bands of 8 map rows as the
// tallest ROI spans, band k in slot k % ring: short ROIs over a tall map wrap that ring many times, ROIs of the second
// batch read only the top bands (the others are never copied), and one tall ROI makes the ring the whole map. 128
// channels: 8 blocks of 16 float32 channels (ring path on 1 and 2 threads) or 4 of 32 float16 ones (1 thread), and
// teams of threads beyond. (The baseline_isa. run widens float16 maps to float32: blocks of 16 there.)
TEST_P(RoiAlignEquivalence, RingOfBandsWrapsOverTallMaps) {
  std::mt19937 random(4400);
  const auto uniform = [&](float lo, float hi) { return std::uniform_real_distribution<float>(lo, hi)(random); };
  std::vector<float> corners;
  std::vector<std::uint32_t> indices;
  for (int r = 0; r < 40; ++r) {
    const std::uint32_t b = r % 3 == 2 ? 1 : 0;
    const float y1 = b == 1 ? uniform(-3.0f, 20.0f) : uniform(-3.0f, 96.0f);
    const float x1 = uniform(-2.0f, 28.0f);
    corners.insert(corners.end(), {x1, y1, x1 + uniform(0.3f, 14.0f), y1 + uniform(0.3f, 13.0f)});
    indices.push_back(b);
  }
  for (const bool tall : {false, true}) {
    std::vector<float> these = corners;
    if (tall) these.insert(these.end(), {3.0f, -2.0f, 20.0f, 101.0f});
    const auto count = static_cast<std::int64_t>(these.size() / 4);
    std::vector<std::uint32_t> batch_of = indices;
    if (tall) batch_of.push_back(0);
    // NCHW input (copied by transposes) and channels-last input of 120 channels (blocks of 15 or 30 channels
    // padded to a whole line: copied one channel run a pixel, not pooled in place).
    for (const auto& [type, channels_last] : {std::pair{DataType::Float32, false}, std::pair{DataType::Float16, false},
                                              std::pair{DataType::Float32, true}, std::pair{DataType::Float16, true}}) {
      const std::int64_t channels = channels_last ? 120 : 128;
      const Input in = make_input({2, channels, 100, 30}, type, channels_last, 4401);
      const Tensor boxes = test::convert(test::make_f32({count, 4}, these).view(), type);
      const Tensor batch = test::make_u32({count}, batch_of);
      for (const auto reduction : {RoiReduction::Average, RoiReduction::Max}) {
        const Dims out_sizes{count, channels, 3, 4};
        RoiAlignParams p;
        p.reduction = reduction;
        p.minimum_samples_per_output = 1;
        p.maximum_samples_per_output = 3;
        const auto expected = run_into(out_sizes, type, false, [&](const TensorView& out) {
          roi_align(in.view(), boxes.view(), batch.view(), out, p, {Backend::Reference, 1});
        });
        for (const int threads : {1, 2, 3, 16}) {
          const auto got = run_into(out_sizes, type, false, [&](const TensorView& out) {
            roi_align(in.view(), boxes.view(), batch.view(), out, p, {GetParam(), threads});
          });
          ASSERT_TRUE(test::bits_equal(expected, got, std::string(to_string(type)) + (channels_last ? " nhwc " : " ") +
                                                          to_string(reduction) + (tall ? " with a tall ROI" : "") +
                                                          ", threads " + std::to_string(threads)));
        }
      }
    }
  }
}

// Calls on several threads at once, of different shapes, in turn: one of them holds the scratch the CPU backend keeps
// between calls, the others use their own, and what an earlier call left in it never reaches a result.
TEST_P(RoiAlignEquivalence, ConcurrentCallsAndReusedScratch) {
  const Tensor boxes = test::make_f32({10, 4}, kBoxes);
  const Tensor batch = test::make_u32({10}, kBatch);
  RoiAlignParams p;
  p.spatial_scale_x = 0.5f;
  p.spatial_scale_y = 0.75f;
  std::vector<Input> inputs;
  std::vector<Dims> out_shapes;
  std::vector<std::vector<float>> expected;
  std::uint32_t seed = 4300;
  for (const std::int64_t channels : {40, 64, 9, 33}) {
    inputs.push_back(make_input({3, channels, 13 + channels % 5, 21}, DataType::Float32, false, seed++));
    out_shapes.push_back({10, channels, 3, 5});
    expected.push_back(run_into(out_shapes.back(), DataType::Float32, false, [&](const TensorView& out) {
      roi_align(inputs.back().view(), boxes.view(), batch.view(), out, p, {Backend::Reference, 1});
    }));
  }
  std::vector<std::vector<float>> got(inputs.size());
  std::vector<std::thread> callers;
  for (int round = 0; round < 3; ++round) {
    for (std::size_t k = 0; k < inputs.size(); ++k) {
      callers.emplace_back([&, k] {
        got[k] = run_into(out_shapes[k], DataType::Float32, false, [&](const TensorView& out) {
          roi_align(inputs[k].view(), boxes.view(), batch.view(), out, p, {GetParam(), 2});
        });
      });
    }
    for (std::thread& t : callers) t.join();
    callers.clear();
    for (std::size_t k = 0; k < inputs.size(); ++k) {
      ASSERT_TRUE(test::bits_equal(expected[k], got[k], "round " + std::to_string(round) + " call " +
                                                            std::to_string(k)));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Registered, RoiAlignEquivalence, ::testing::ValuesIn(test::backends_under_test()),
                         test::backend_test_name);

}  // namespace
}  // namespace rsz
