// PNG and JPEG outputs of resample and upsample are encoded band by band as they are computed (the whole result
// never exists in memory). The files must be exactly what the whole result gives (a TIFF of the same command is
// still computed whole and encoded in one piece). Checked over several bands and a short last band, 8 and 16 bits,
// gray and alpha outputs, every operator mode, cover crops (shifted offsets), and offsets whose shift is not exact
// in float32 (computed whole).
#include <gtest/gtest.h>

#include <filesystem>
#include <stdexcept>
#include <string>

#include "cli/cli_support.h"
#include "rsz/io/image.h"
#include "support/test_util.h"

namespace rsz {
namespace {

using test::run_rsz;
using test::ScratchDir;

const std::string kPhoto = std::string(RSZ_SOURCE_DIR) + "/samples/photos/chelsea.png";  // 451 x 300, RGB
const std::string kCamera = std::string(RSZ_SOURCE_DIR) + "/samples/photos/camera.png";  // 512 x 512, gray

// Runs `command` into `image_name` (PNG or JPEG: encoded band by band) and into whole.tiff (a format encoded in one
// piece: the whole result is computed first), and checks that the PNG holds the TIFF's samples, and that the JPEG
// is byte for byte the JPEG of the TIFF's samples at `quality`.
void expect_same(const ScratchDir& dir, const std::string& command, const std::string& image_name, int quality = 0) {
  auto r = run_rsz(dir, command + " -o whole.tiff -q");
  ASSERT_EQ(r.status, 0) << command << "\n" << r.err;
  r = run_rsz(dir, command + " -o " + image_name + " -q");
  ASSERT_EQ(r.status, 0) << command << "\n" << r.err;
  const io::Image want = io::read_image(dir / "whole.tiff");
  ASSERT_GT(want.height, 16) << "too small to need bands: " << command;
  if (image_name.substr(image_name.size() - 4) == ".png") {
    const io::Image got = io::read_image(dir / image_name);
    ASSERT_EQ(got.width, want.width) << command;
    ASSERT_EQ(got.height, want.height) << command;
    ASSERT_EQ(got.channels, want.channels) << command;
    ASSERT_EQ(got.bit_depth, want.bit_depth) << command;
    EXPECT_TRUE(got.data8 == want.data8) << command;
    EXPECT_TRUE(got.data16 == want.data16) << command;
  } else {
    io::write_image(dir / "whole.jpg", want, quality);
    EXPECT_TRUE(test::read_file(dir / image_name) == test::read_file(dir / "whole.jpg")) << command;
  }
}

TEST(BandedOutput, ResampleImagesEqualTheWholeResult) {
  ScratchDir dir("banded-resample");
  const std::string in = "resample -i " + kPhoto + " --strip";
  expect_same(dir, in + " --scale 3.7", "a.png");  // 1668 x 1110: 9 bands, a short last one
  expect_same(dir, in + " --scale 2.9 --mode nearest", "b.png");
  expect_same(dir, in + " --scale 3.1 --depth 16", "c.png");
  expect_same(dir, in + " --scales 1,1,3,0.5 --antialias", "d.png");
  expect_same(dir, in + " --size 1500x1500 --fit cover --gravity south", "e.png");
  expect_same(dir, in + " --scale 3.3 --quality 90", "f.jpg", 90);
  expect_same(dir, in + " --scale 2.5 --output-offsets 0.3", "g.png");  // the shift is not exact: computed whole
  expect_same(dir, in + " --scale 2.2 --grayscale", "h.png");
  expect_same(dir, "resample -i " + kCamera + " --strip --scale 3.5 --mode nearest --rounding-direction floor",
              "i.png");
}

TEST(BandedOutput, UpsampleImagesEqualTheWholeResult) {
  ScratchDir dir("banded-upsample");
  expect_same(dir, "upsample -i " + kPhoto + " --strip --factor 4", "a.png");
  expect_same(dir, "upsample -i " + kPhoto + " --strip --factor 3,5 --mode linear", "b.png");
  expect_same(dir, "upsample -i " + kCamera + " --strip --factor 3 --mode linear --depth 16", "c.png");
  expect_same(dir, "upsample -i " + kPhoto + " --strip --factor 3 --grayscale", "d.jpg");
}

// A producer that fails midway: its exception reaches the caller unchanged, nothing is written, and the encoders
// release what they hold (JPEG's memory destination has moved to a larger buffer by then; the sanitizer build
// checks that it is freed once). EXIF larger than libjpeg's first 4 KB buffer makes it move before any row.
TEST(BandedOutput, AFailingProducerWritesNothing) {
  ScratchDir dir("banded-failure");
  io::Image header;
  header.width = 1500;
  header.height = 1200;
  header.channels = 3;
  header.exif = std::string("MM\0*\0\0\0\x08\0\0") + std::string(6000, '\0');
  for (const char* name : {"f.jpg", "f.png", "f.tiff"}) {
    std::uint32_t state = 7;
    bool thrown = false;
    try {
      io::write_image_rows(dir / name, header, 100, [&](std::int64_t first, io::Image& band) {
        if (first >= 600) throw std::runtime_error("producer failed");
        for (auto& v : band.data8) {
          state = state * 1103515245u + 12345u;
          v = static_cast<std::uint8_t>(state >> 24);
        }
      });
    } catch (const std::runtime_error& e) {
      thrown = std::string(e.what()) == "producer failed";
    }
    EXPECT_TRUE(thrown) << name;
    EXPECT_FALSE(std::filesystem::exists(dir / name)) << name;
  }
}

TEST(BandedOutput, ThumbnailPercent) {
  ScratchDir dir("banded-percent");
  const auto r = run_rsz(dir, "thumbnail -i " + kPhoto + " -o half.png --size 50% -q");
  ASSERT_EQ(r.status, 0) << r.err;
  const io::Image image = io::read_image(dir / "half.png");
  EXPECT_EQ(image.width, 226);
  EXPECT_EQ(image.height, 150);
}

// The memory budget counts what a banded output holds: one band of the result and of its pixels, and the encoded
// file, not the whole float result. A x4 upsample to PNG (a 1804 x 1200 float32 result of 26 MB) fits 20M and gives
// the bytes of an unlimited run; the same result as .npy (held whole) is refused under the same budget.
TEST(BandedOutput, TheMemoryBudgetCountsOneBand) {
  ScratchDir dir("banded-budget");
  const std::string up = "upsample -i " + kPhoto + " --factor 4 -q";
  ASSERT_EQ(run_rsz(dir, up + " -o free.png").status, 0);
  const auto r = run_rsz(dir, up + " -o tight.png --max-memory 20M");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(test::read_file(dir / "tight.png"), test::read_file(dir / "free.png"));
  const auto whole = run_rsz(dir, up + " -o whole.npy --max-memory 20M");
  EXPECT_EQ(whole.status, 2);
  EXPECT_NE(whole.err.find("over the memory budget of 20.0 MiB"), std::string::npos) << whole.err;
  const auto resample = run_rsz(dir, "resample -i " + kPhoto + " --scale 4 -o r.png --max-memory 20M -q");
  EXPECT_EQ(resample.status, 0) << resample.err;
}

}  // namespace
}  // namespace rsz
