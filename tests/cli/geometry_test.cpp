// --size geometry (WxH, Wx, xH, N%, and the suffixes > < ^ !), --fit and --gravity, end to end: the sizes each form
// gives, and that cover and contain are exact crops / placements of the same resample (no second filter). Also the
// output controls --grayscale and --depth.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <string>

#include "cli/cli_support.h"
#include "rsz/io/image.h"
#include "rsz/io/npy.h"

namespace rsz {
namespace {

using test::run_rsz;
using test::ScratchDir;

const std::string kPhoto = std::string(RSZ_SOURCE_DIR) + "/samples/photos/chelsea.png";  // 451 x 300

Tensor resample_to_npy(const ScratchDir& dir, const std::string& flags) {
  const auto r = run_rsz(dir, "resample -i " + kPhoto + " -o out.npy -q " + flags);
  EXPECT_EQ(r.status, 0) << flags << "\n" << r.err;
  return io::read_npy(dir / "out.npy");
}

std::string hw(const Tensor& t) { return std::to_string(t.size(3)) + "x" + std::to_string(t.size(2)); }

TEST(Geometry, EachFormGivesTheSizeImageMagickAndSharpUsersExpect) {
  ScratchDir dir("geometry");
  const std::pair<const char*, const char*> cases[] = {
      {"--size 200x200", "200x200"},               {"--size 200x200!", "200x200"},
      {"--size '200x200>'", "200x133"},            {"--size '1000x1000>'", "451x300"},
      {"--size '1000x1000<'", "1000x665"},         {"--size '200x200<'", "451x300"},
      {"--size '200x200^'", "301x200"},            {"--size 50%", "226x150"},
      {"--size 100x", "100x67"},                   {"--size x100", "150x100"},
      {"--size 120", "120x80"},                    {"--size 200x200 --fit inside", "200x133"},
      {"--size 200x200 --fit outside", "301x200"}, {"--size 200x200 --fit cover", "200x200"},
      {"--size 200x200 --fit contain", "200x200"}, {"--size 200x200 --fit fill", "200x200"},
  };
  for (const auto& [flags, size] : cases) EXPECT_EQ(hw(resample_to_npy(dir, flags)), size) << flags;
}

TEST(Geometry, CoverIsAnExactCropOfTheCoveringResize) {
  ScratchDir dir("cover");
  const Tensor full = resample_to_npy(dir, "--size '200x200^'");  // 301 x 200
  ASSERT_EQ(hw(full), "301x200");
  const std::pair<const char*, std::int64_t> gravities[] = {{"west", 0}, {"center", 50}, {"east", 101}};
  for (const auto& [gravity, left] : gravities) {
    const Tensor crop = resample_to_npy(dir, std::string("--size 200x200 --fit cover --gravity ") + gravity);
    ASSERT_EQ(hw(crop), "200x200");
    for (std::int64_t c = 0; c < 3; ++c) {
      for (std::int64_t y = 0; y < 200; ++y) {
        const float* want = full.data_as<float>() + (c * 200 + y) * 301 + left;
        const float* got = crop.data_as<float>() + (c * 200 + y) * 200;
        ASSERT_EQ(std::memcmp(want, got, 200 * sizeof(float)), 0) << gravity << " row " << y;
      }
    }
  }
}

// The preset's scales come from the resized image, not from the window cover keeps of it: the window is still an
// exact crop of the same resize (the window's scale was (200 - 1) / (451 - 1) before, far from the crop).
TEST(Geometry, CoverWithAlignCornersIsACropOfTheAlignCornersResize) {
  ScratchDir dir("cover-align-corners");
  const Tensor whole = resample_to_npy(dir, "--size 301x200 --preset align_corners");
  const Tensor crop = resample_to_npy(dir, "--size 200x200 --fit cover --preset align_corners");
  ASSERT_EQ(crop.sizes(), (Dims{1, 3, 200, 200}));
  for (std::int64_t c = 0; c < 3; ++c) {
    for (std::int64_t y = 0; y < 200; ++y) {
      const float* want = whole.data_as<float>() + (c * 200 + y) * 301 + 50;
      const float* got = crop.data_as<float>() + (c * 200 + y) * 200;
      ASSERT_EQ(std::memcmp(want, got, 200 * sizeof(float)), 0) << "row " << y;
    }
  }
}

// An image's channels are never resampled: a config's N and C entries apply to .npy tensors only.
TEST(Geometry, ConfigSizesAddressAnImagesHeightAndWidthOnly) {
  ScratchDir dir("image-mode");
  io::Image rgba;
  rgba.width = 40;
  rgba.height = 30;
  rgba.channels = 4;
  rgba.data8.resize(40 * 30 * 4);
  for (std::int64_t i = 0; i < 40 * 30; ++i) {  // a red disc on a transparent background
    const std::int64_t x = i % 40 - 20, y = i / 40 - 15;
    const bool in = x * x + y * y < 100;
    const std::uint8_t px[4] = {static_cast<std::uint8_t>(in ? 255 : 0), 0, 0, static_cast<std::uint8_t>(in ? 255 : 0)};
    std::memcpy(&rgba.data8[static_cast<std::size_t>(i) * 4], px, 4);
  }
  io::write_image((dir / "disc.png"), rgba);
  const std::string config = std::string(RSZ_SOURCE_DIR) + "/configs/resample_size.json";  // [1, 3, 224, 224]
  ASSERT_EQ(run_rsz(dir, "resample -i disc.png -o out.png --config " + config).status, 0);
  const io::Image out = io::read_image((dir / "out.png"));
  ASSERT_EQ(out.channels, 4);
  ASSERT_EQ(out.width, 224);
  ASSERT_EQ(out.height, 224);
  const std::uint8_t* centre = &out.data8[(112 * 224 + 112) * 4];
  EXPECT_EQ(centre[0], 255);
  EXPECT_EQ(centre[1], 0);
  EXPECT_EQ(centre[2], 0);
  EXPECT_EQ(centre[3], 255);
  for (std::size_t i = 0; i < out.data8.size(); i += 4) ASSERT_EQ(out.data8[i + 2], 0) << "blue at " << i / 4;
  // A .npy tensor is resampled on all four axes as configured (DirectML), here 1 x 4 -> 1 x 3 channels.
  Tensor x(DataType::Float32, {1, 4, 5, 6});
  for (std::int64_t i = 0; i < x.element_count(); ++i) x.data_as<float>()[i] = static_cast<float>(i % 7);
  io::write_npy((dir / "x.npy"), x.view());
  ASSERT_EQ(run_rsz(dir, "resample -i x.npy -o y.npy --config " + config).status, 0);
  EXPECT_EQ(io::read_npy((dir / "y.npy")).sizes(), (Dims{1, 3, 224, 224}));
}

TEST(Geometry, ContainPlacesTheInsideResizeOnAZeroCanvas) {
  ScratchDir dir("contain");
  const Tensor inside = resample_to_npy(dir, "--size 200x200 --fit inside");  // 200 x 133
  const Tensor south = resample_to_npy(dir, "--size 200x200 --fit contain --gravity south");
  const Tensor center = resample_to_npy(dir, "--size 200x200 --fit contain");
  for (const auto& [canvas, top] : {std::pair{&south, std::int64_t{67}}, std::pair{&center, std::int64_t{33}}}) {
    for (std::int64_t c = 0; c < 3; ++c) {
      for (std::int64_t y = 0; y < 200; ++y) {
        const float* row = canvas->data_as<float>() + (c * 200 + y) * 200;
        if (y < top || y >= top + 133) {
          for (std::int64_t x = 0; x < 200; ++x) ASSERT_EQ(row[x], 0.0f) << "padding at " << y;
        } else {
          const float* want = inside.data_as<float>() + (c * 133 + (y - top)) * 200;
          ASSERT_EQ(std::memcmp(want, row, 200 * sizeof(float)), 0) << "image row " << y;
        }
      }
    }
  }
}

TEST(Geometry, ConflictingOrIncompleteRequestsAreUsageErrors) {
  ScratchDir dir("geometry-errors");
  const std::pair<const char*, const char*> cases[] = {
      {"--size 'abc>'", "not a size"},
      {"--size 0x10", "not a size"},
      {"--size '200x200>' --fit cover", "drop one"},
      {"--size 200x200 --gravity north", "--gravity north: only with --fit cover or contain"},
      {"--size 200x --fit cover", "needs both sides"},
      {"--scale 2 --fit inside", "give the box with --size WxH"},
      {"--size '200^'", "need both sides"},
  };
  for (const auto& [flags, needle] : cases) {
    const auto r = run_rsz(dir, "resample -i " + kPhoto + " -o out.png -q " + flags);
    EXPECT_EQ(r.status, 2) << flags;
    EXPECT_NE(r.err.find(needle), std::string::npos) << flags << "\n" << r.err;
  }
}

TEST(OutputControl, GrayscaleIsBt601LumaAndDepthSetsTheBits) {
  ScratchDir dir("output-control");
  // An identity resample, so the output pixels are the input's, converted.
  auto r = run_rsz(dir, "resample -i " + kPhoto + " -o gray.png --scale 1 --grayscale -q");
  ASSERT_EQ(r.status, 0) << r.err;
  const io::Image rgb = io::read_image(kPhoto);
  const io::Image gray = io::read_image(dir / "gray.png");
  ASSERT_EQ(gray.channels, 1);
  ASSERT_EQ(gray.width, rgb.width);
  for (std::size_t i = 0; i < gray.data8.size(); ++i) {
    const double luma = 0.299 * rgb.data8[3 * i] + 0.587 * rgb.data8[3 * i + 1] + 0.114 * rgb.data8[3 * i + 2];
    ASSERT_LE(std::abs(gray.data8[i] - luma), 0.5 + 1e-3) << "pixel " << i;  // rounded to the nearest level
  }
  // --depth 16 widens exactly (p -> 257 p); --depth 8 narrows a 16-bit result; 16 bits into JPEG is refused.
  r = run_rsz(dir, "resample -i " + kPhoto + " -o deep.png --scale 1 --depth 16 -q");
  ASSERT_EQ(r.status, 0) << r.err;
  const io::Image deep = io::read_image(dir / "deep.png");
  ASSERT_EQ(deep.bit_depth, 16);
  for (std::size_t i = 0; i < deep.data16.size(); ++i) ASSERT_EQ(deep.data16[i], 257 * rgb.data8[i]) << i;
  r = run_rsz(dir, "resample -i deep.png -o back.png --scale 1 --depth 8 -q");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(io::read_image(dir / "back.png").data8, rgb.data8);
  r = run_rsz(dir, "resample -i " + kPhoto + " -o deep.jpg --scale 1 --depth 16 -q");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("JPEG cannot hold 16-bit samples"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "deep.jpg"));
  // .npy outputs are left as computed.
  r = run_rsz(dir, "resample -i " + kPhoto + " -o t.npy --scale 1 --grayscale -q");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(io::read_npy(dir / "t.npy").size(1), 3);
}

}  // namespace
}  // namespace rsz
