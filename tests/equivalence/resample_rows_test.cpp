// rsz::resample_rows (a tall input band by band) against rsz::resample over the whole input, bit for bit: every mode
// (nearest with each rounding rule, linear, antialiased), float32 / float16 / unorm8 inputs (NCHW and NHWC), scales
// that shrink by a little, by a lot (filters spanning many rows) and enlarge, offsets, band heights from 1 row, bands
// exactly as large as resample_rows_read says and larger, on the reference and CPU backends at 1 and 3 threads.
// Output rows are banded too, by shifting the output offset as rsz's front ends do.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <sstream>

#include "equivalence/equivalence_util.h"
#include "rsz/error.h"
#include "rsz/resample.h"

namespace rsz {
namespace {

using test::Input;
using test::make_input;

// A unorm8 NHWC input, 0 and 255 included.
struct Unorm8Input {
  std::vector<std::uint8_t> data;
  Dims sizes;
  Dims strides;
  ConstTensorView view() const { return ConstTensorView(data.data(), DataType::UNorm8, sizes, strides); }
};

Unorm8Input make_unorm8(const Dims& sizes, std::uint32_t seed) {
  Unorm8Input in;
  in.sizes = sizes;
  in.strides = {sizes[1] * sizes[2] * sizes[3], 1, sizes[3] * sizes[1], sizes[1]};
  in.data.resize(static_cast<std::size_t>(sizes[0] * sizes[1] * sizes[2] * sizes[3]));
  std::uint32_t state = seed;
  for (std::size_t i = 0; i < in.data.size(); ++i) {
    state = state * 1664525u + 1013904223u;
    in.data[i] = i % 11 == 0 ? 255 : i % 13 == 0 ? 0 : static_cast<std::uint8_t>(state >> 24);
  }
  return in;
}

// The view of input rows [first, last) of `whole`.
ConstTensorView rows_of(const ConstTensorView& whole, std::int64_t first, std::int64_t last) {
  const auto* base = static_cast<const std::byte*>(whole.data()) +
                     first * whole.stride(2) * static_cast<std::int64_t>(element_size(whole.dtype()));
  Dims sizes = whole.sizes();
  sizes[2] = last - first;
  return ConstTensorView(base, whole.dtype(), sizes, whole.strides());
}

DataType output_type(DataType in) { return in == DataType::UNorm8 ? DataType::Float32 : in; }

// The whole output computed band by band: output rows [o, o + out_band) from the input rows they read, widened by
// `margin` rows on each side (within the input).
std::vector<unsigned char> banded(const ConstTensorView& whole, const Dims& out_sizes, const ResampleParams& p,
                                  std::int64_t out_band, std::int64_t margin, const ExecOptions& exec) {
  const DataType type = output_type(whole.dtype());
  return test::run_into_bytes(out_sizes, type, [&](const TensorView& out) {
    const std::int64_t height = whole.size(2);
    for (std::int64_t o = 0; o < out_sizes[2]; o += out_band) {
      const std::int64_t rows = std::min(out_band, out_sizes[2] - o);
      ResampleParams shifted = p;
      shifted.output_pixel_offsets[2] -= static_cast<float>(o);
      const auto read = resample_rows_read(height, rows, shifted);
      ASSERT_LE(0, read[0]);
      ASSERT_LT(read[0], read[1]);
      ASSERT_LE(read[1], height);
      const std::int64_t first = std::max<std::int64_t>(0, read[0] - margin);
      const std::int64_t last = std::min(height, read[1] + margin);
      Dims sizes = out_sizes;
      sizes[2] = rows;
      auto* origin = static_cast<std::byte*>(out.data()) +
                     o * out.stride(2) * static_cast<std::int64_t>(element_size(type));
      resample_rows(rows_of(whole, first, last), first, height, TensorView(origin, type, sizes, out.strides()),
                    shifted, exec);
    }
  });
}

std::string describe(const ConstTensorView& in, const ResampleParams& p, std::int64_t band, std::int64_t margin,
                     Backend backend, int threads) {
  std::ostringstream out;
  out << to_string(in.dtype()) << " " << to_string(p.interpolation) << (p.antialiased ? " antialiased" : "")
      << " rounding " << to_string(p.rounding_direction) << " scales {" << p.scales[2] << "," << p.scales[3]
      << "} offsets " << p.input_pixel_offsets[2] << "/" << p.output_pixel_offsets[2] << " band " << band
      << " margin " << margin << " " << to_string(backend) << " x" << threads;
  return out.str();
}

TEST(ResampleRows, BandByBandGivesTheWholeInputsBits) {
  const std::array<float, 2> scale_sets[] = {{0.5f, 0.5f}, {0.37f, 0.61f}, {0.08f, 0.11f}, {1.5f, 0.3f}, {2.0f, 1.0f}};
  const std::pair<float, float> offsets[] = {{0.5f, -0.5f}, {0.0f, 0.0f}, {0.25f, 1.5f}, {-3.0f, 7.0f}};
  struct Mode {
    InterpolationMode interpolation;
    bool antialiased;
    NearestRounding rounding;
  };
  const Mode modes[] = {{InterpolationMode::Linear, true, NearestRounding::RoundPreferCeil},
                        {InterpolationMode::Linear, false, NearestRounding::RoundPreferCeil},
                        {InterpolationMode::Nearest, false, NearestRounding::RoundPreferCeil},
                        {InterpolationMode::Nearest, false, NearestRounding::RoundPreferFloor},
                        {InterpolationMode::Nearest, false, NearestRounding::Floor},
                        {InterpolationMode::Nearest, false, NearestRounding::Ceil}};
  const Input f32 = make_input({1, 3, 57, 29}, DataType::Float32, true, 9100);
  const Input f16 = make_input({2, 2, 43, 19}, DataType::Float16, false, 9101);
  const Unorm8Input u8 = make_unorm8({1, 3, 61, 23}, 9102);
  int cases = 0;
  for (const ConstTensorView& whole : {f32.view(), f16.view(), u8.view()}) {
    for (const Mode& mode : modes) {
      for (const auto& s : scale_sets) {
        for (const auto& [ip, op] : offsets) {
          ResampleParams p;
          p.interpolation = mode.interpolation;
          p.antialiased = mode.antialiased;
          p.rounding_direction = mode.rounding;
          p.scales = {1.0f, 1.0f, s[0], s[1]};
          p.input_pixel_offsets = {0.0f, 0.0f, ip, ip};
          p.output_pixel_offsets = {0.0f, 0.0f, op, op};
          const Dims out_sizes = resample_output_sizes(whole.sizes(), p.scales);
          const DataType type = output_type(whole.dtype());
          const auto expected = test::run_into_bytes(
              out_sizes, type, [&](const TensorView& out) { resample(whole, out, p, {Backend::Reference, 1}); });
          for (const Backend backend : {Backend::Reference, Backend::Cpu}) {
            for (const int threads : {1, 3}) {
              if (backend == Backend::Reference && threads > 1) continue;
              for (const std::int64_t band : {1, 4, 1000}) {
                for (const std::int64_t margin : {0, 2}) {
                  const auto got = banded(whole, out_sizes, p, band, margin, {backend, threads});
                  const std::size_t at = test::first_difference(expected, got, type);
                  ASSERT_EQ(at, expected.size())
                      << describe(whole, p, band, margin, backend, threads) << ": byte " << at;
                  ++cases;
                }
              }
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(cases, 3 * 6 * 5 * 4 * 3 * 3 * 2);
}

// The rows read are the rows the taps touch: a band one row short at either end is refused, naming both ranges,
// before anything is written.
TEST(ResampleRows, ABandMissingARowIsRefused) {
  const Unorm8Input in = make_unorm8({1, 3, 200, 40}, 9200);
  ResampleParams p;
  p.antialiased = true;
  p.scales = {1.0f, 1.0f, 0.1f, 0.1f};
  const Dims out_sizes = resample_output_sizes(in.sizes, p.scales);
  const auto read = resample_rows_read(200, out_sizes[2], p);
  EXPECT_EQ(read[0], 0);
  EXPECT_EQ(read[1], 200);
  ResampleParams middle = p;
  middle.output_pixel_offsets[2] -= 10.0f;  // output rows 10 and 11: input rows around 105 and 115
  const auto mid = resample_rows_read(200, 2, middle);
  EXPECT_GT(mid[0], 80);
  EXPECT_LT(mid[1], 140);
  std::vector<float> out(2 * 4 * 3, -1.0f);
  const TensorView view(out.data(), DataType::Float32, {1, 3, 2, 4}, {24, 1, 12, 3});
  for (const auto& [first, last] : {std::pair{mid[0] + 1, mid[1]}, std::pair{mid[0], mid[1] - 1}}) {
    try {
      resample_rows(rows_of(in.view(), first, last), first, 200, view, middle);
      FAIL() << "a band missing a row was taken";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
      EXPECT_NE(std::string(e.what()).find("reads input rows [" + std::to_string(mid[0]) + ", " +
                                           std::to_string(mid[1]) + ")"),
                std::string::npos)
          << e.what();
    }
  }
  EXPECT_TRUE(std::all_of(out.begin(), out.end(), [](float v) { return v == -1.0f; }));
  EXPECT_THROW(resample_rows(rows_of(in.view(), 0, 10), 195, 200, view, middle), Error);  // past the input's end
}

}  // namespace
}  // namespace rsz
