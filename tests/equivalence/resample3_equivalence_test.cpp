// RESAMPLE2/3 (SEMANTICS.md §1.2 rounding directions, §1.7 antialiasing): the CPU backend against the reference
// twin, bit for bit, NaNs included, over data types x layouts x scales (downscaled on one to four axes, by 0.5, odd
// ratios and tiny factors whose filters span the whole axis, mixed with upscaled axes) x offsets x thread counts,
// packed and strided outputs, special values in the data, unorm8 inputs, and the table-size fallback.
#include <gtest/gtest.h>

#include <sstream>

#include "equivalence/equivalence_util.h"
#include "rsz/resample.h"

namespace rsz {
namespace {

class Resample3Equivalence : public ::testing::TestWithParam<Backend> {};

using test::Input;
using test::make_input;

const DataType kTypes[] = {DataType::Float32, DataType::Float16};

std::string describe(const char* what, DataType type, bool channels_last, const std::array<float, 4>& s,
                     float ip, float op, int threads) {
  std::ostringstream out;
  out << what << " " << to_string(type) << (channels_last ? " nhwc" : " nchw") << " scales {" << s[0] << "," << s[1]
      << "," << s[2] << "," << s[3] << "} offsets " << ip << "/" << op << " threads " << threads;
  return out.str();
}

TEST_P(Resample3Equivalence, AntialiasedLinearMatchesTheReference) {
  const std::array<float, 4> scale_sets[] = {
      {1, 1, 0.5f, 0.5f},   {1, 1, 0.37f, 0.61f}, {1, 1, 0.25f, 2.0f}, {1, 1, 1.5f, 0.3f},   {1, 0.5f, 0.7f, 1},
      {0.5f, 1, 1, 0.45f},  {0.6f, 0.7f, 0.8f, 0.9f}, {1, 1, 0.08f, 0.05f}, {1, 1, 1, 1},   {1, 1, 2, 3}};
  const std::pair<float, float> offsets[] = {{0.5f, -0.5f}, {0.0f, 0.0f}, {0.25f, 1.5f}, {-3.0f, 7.0f}};
  std::uint32_t seed = 7000;
  int cases = 0;
  for (const DataType type : kTypes) {
    for (const bool channels_last : {false, true}) {
      const Input in = make_input({2, 3, 23, 41}, type, channels_last, seed++);
      for (const auto& scales : scale_sets) {
        for (const auto& [ip, op] : offsets) {
          ResampleParams p;
          p.interpolation = InterpolationMode::Linear;
          p.antialiased = true;
          p.scales = scales;
          p.input_pixel_offsets = {ip, ip, ip, ip};
          p.output_pixel_offsets = {op, op, op, op};
          const Dims out_sizes = resample_output_sizes(in.sizes, scales);
          const auto expected = test::run_into(out_sizes, type, false, [&](const TensorView& out) {
            resample(in.view(), out, p, {Backend::Reference, 1});
          });
          for (const int threads : {1, 2, 7}) {
            for (const bool strided_out : {false, true}) {
              const auto got = test::run_into(out_sizes, type, strided_out, [&](const TensorView& out) {
                resample(in.view(), out, p, {GetParam(), threads});
              });
              ASSERT_TRUE(test::bits_equal(expected, got,
                                           describe("antialiased", type, channels_last, scales, ip, op, threads)));
              ++cases;
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(cases, 2 * 2 * 10 * 4 * 3 * 2);
}

// Where no axis is downscaled, antialiasing changes nothing: RESAMPLE1's linear bits.
TEST_P(Resample3Equivalence, AntialiasWithoutDownscaleIsResample1) {
  const Input in = make_input({1, 3, 11, 17}, DataType::Float32, true, 7100);
  for (const std::array<float, 4> scales : {std::array<float, 4>{1, 1, 1, 1}, {1, 1, 2, 1.5f}, {1, 2, 1, 3}}) {
    for (const Backend backend : {Backend::Reference, GetParam()}) {
      ResampleParams p;
      p.scales = scales;
      const Dims out_sizes = resample_output_sizes(in.sizes, scales);
      const auto plain = test::run_into(out_sizes, DataType::Float32, false, [&](const TensorView& out) {
        resample(in.view(), out, p, {backend, 2});
      });
      p.antialiased = true;
      const auto antialiased = test::run_into(out_sizes, DataType::Float32, false, [&](const TensorView& out) {
        resample(in.view(), out, p, {backend, 2});
      });
      ASSERT_TRUE(test::bits_equal(plain, antialiased, "antialias without downscale"));
    }
  }
}

// Quiet and signalling NaNs, infinities, zeros of both signs, denormals and the largest finite values through the
// antialiased filters: the same bits as the reference, every NaN canonical.
TEST_P(Resample3Equivalence, AntialiasSpecialValuesKeepTheReferenceBits) {
  std::uint32_t seed = 7200;
  for (const DataType type : kTypes) {
    for (const bool channels_last : {false, true}) {
      Input in = make_input({2, 3, 19, 37}, type, channels_last, seed++);
      test::sprinkle_special_values(in, 7);
      for (const std::array<float, 4> scales :
           {std::array<float, 4>{1, 1, 0.5f, 0.5f}, {1, 0.6f, 0.3f, 1.7f}, {0.5f, 1, 2, 0.2f}}) {
        ResampleParams p;
        p.antialiased = true;
        p.scales = scales;
        const Dims out_sizes = resample_output_sizes(in.sizes, scales);
        const auto expected = test::run_into_bytes(out_sizes, type, [&](const TensorView& out) {
          resample(in.view(), out, p, {Backend::Reference, 1});
        });
        const auto got = test::run_into_bytes(out_sizes, type, [&](const TensorView& out) {
          resample(in.view(), out, p, {GetParam(), 2});
        });
        const std::size_t first = test::first_difference(expected, got, type);
        ASSERT_EQ(first, expected.size()) << describe("special values", type, channels_last, scales, 0.5f, -0.5f, 2)
                                          << ": " << test::hex_bytes(expected, first, element_size(type)) << " vs "
                                          << test::hex_bytes(got, first, element_size(type));
        for (std::size_t at = 0; at < got.size(); at += element_size(type)) {
          ASSERT_FALSE(test::is_non_canonical_nan(got, at, element_size(type))) << "element " << at;
        }
      }
    }
  }
}

// An interleaved 8-bit image read in place: the same bits as the reference on the same unorm8 view.
TEST_P(Resample3Equivalence, AntialiasUnorm8Input) {
  const std::int64_t h = 29, w = 53, c = 3;
  std::vector<std::uint8_t> pixels(static_cast<std::size_t>(h * w * c));
  for (std::size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<std::uint8_t>((i * 37 + i / 7) % 256);
  const ConstTensorView in(pixels.data(), DataType::UNorm8, {1, c, h, w}, {h * w * c, 1, w * c, c});
  for (const DataType out_type : kTypes) {
    ResampleParams p;
    p.antialiased = true;
    p.scales = {1, 1, 0.3f, 0.26f};
    const Dims out_sizes = resample_output_sizes({1, c, h, w}, p.scales);
    const auto expected =
        test::run_into(out_sizes, out_type, false, [&](const TensorView& out) {
          resample(in, out, p, {Backend::Reference, 1});
        });
    const auto got = test::run_into(out_sizes, out_type, true, [&](const TensorView& out) {
      resample(in, out, p, {GetParam(), 2});
    });
    ASSERT_TRUE(test::bits_equal(expected, got, "unorm8 antialiased"));
  }
}

// A scale far below the output/input size ratio makes every output's filter span the whole axis; past the table
// budget the CPU backend computes such calls through the reference loop: still the same bits.
TEST_P(Resample3Equivalence, TinyScaleWholeAxisFilters) {
  const Input in = make_input({1, 1, 2, 9000}, DataType::Float32, false, 7300);
  ResampleParams p;
  p.antialiased = true;
  p.scales = {1, 1, 1, 1e-4f};
  const Dims out_sizes{1, 1, 2, 8000};  // the caller's sizes: 8000 outputs x 9000 taps is over the table budget
  const auto expected = test::run_into(out_sizes, DataType::Float32, false, [&](const TensorView& out) {
    resample(in.view(), out, p, {Backend::Reference, 1});
  });
  const auto got = test::run_into(out_sizes, DataType::Float32, false, [&](const TensorView& out) {
    resample(in.view(), out, p, {GetParam(), 2});
  });
  ASSERT_TRUE(test::bits_equal(expected, got, "tiny scale"));
  // Small enough for the tables: 300 outputs.
  const Dims small{1, 1, 2, 300};
  const auto expected_small = test::run_into(small, DataType::Float32, false, [&](const TensorView& out) {
    resample(in.view(), out, p, {Backend::Reference, 1});
  });
  const auto got_small = test::run_into(small, DataType::Float32, true, [&](const TensorView& out) {
    resample(in.view(), out, p, {GetParam(), 2});
  });
  ASSERT_TRUE(test::bits_equal(expected_small, got_small, "tiny scale, tables"));
}

TEST_P(Resample3Equivalence, RoundingDirectionsMatchTheReference) {
  const std::array<float, 4> scale_sets[] = {{1, 1, 0.5f, 0.5f}, {1, 1, 2, 3},       {1, 1, 1.5f, 0.75f},
                                             {2, 0.5f, 1.25f, 0.8f}, {1, 1, 1, 1}, {1, 1, 4, 0.25f}};
  const std::pair<float, float> offsets[] = {{0.5f, -0.5f}, {0.0f, 0.0f}, {0.5f, 0.0f}, {0.0f, 0.5f}};
  std::uint32_t seed = 7400;
  int cases = 0;
  for (const DataType type : kTypes) {
    for (const bool channels_last : {false, true}) {
      Input in = make_input({2, 3, 9, 21}, type, channels_last, seed++);
      test::sprinkle_special_values(in, 11);
      for (const NearestRounding rounding : {NearestRounding::RoundPreferCeil, NearestRounding::RoundPreferFloor,
                                             NearestRounding::Floor, NearestRounding::Ceil}) {
        for (const auto& scales : scale_sets) {
          for (const auto& [ip, op] : offsets) {
            ResampleParams p;
            p.interpolation = InterpolationMode::Nearest;
            p.rounding_direction = rounding;
            p.antialiased = cases % 2 == 0;  // nearest ignores it
            p.scales = scales;
            p.input_pixel_offsets = {ip, ip, ip, ip};
            p.output_pixel_offsets = {op, op, op, op};
            const Dims out_sizes = resample_output_sizes(in.sizes, scales);
            const auto expected = test::run_into_bytes(out_sizes, type, [&](const TensorView& out) {
              resample(in.view(), out, p, {Backend::Reference, 1});
            });
            const auto got = test::run_into_bytes(out_sizes, type, [&](const TensorView& out) {
              resample(in.view(), out, p, {GetParam(), 2});
            });
            ASSERT_EQ(test::first_difference(expected, got, type), expected.size())
                << describe(to_string(rounding), type, channels_last, scales, ip, op, 2);
            ++cases;
          }
        }
      }
    }
  }
  EXPECT_EQ(cases, 2 * 2 * 4 * 6 * 4);
}

INSTANTIATE_TEST_SUITE_P(Registered, Resample3Equivalence, ::testing::ValuesIn(test::backends_under_test()),
                         test::backend_test_name);

}  // namespace
}  // namespace rsz
