// PNG and JPEG outputs of resample and upsample are encoded band by band as they are computed (the whole result
// never exists in memory). The files must be exactly what the whole result gives (a TIFF of the same command is
// still computed whole and encoded in one piece). Checked over several bands and a short last band, 8 and 16 bits,
// gray and alpha outputs, every operator mode, cover crops (shifted offsets), and offsets whose shift is not exact
// in float32 (computed whole). JPEG inputs are decoded band by band into the filter (io::open_image_rows with
// rsz::resample_rows): the files must be what the same pixels read whole (from a PNG copy) give, in less memory.
#include <gtest/gtest.h>

#include <cmath>
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

// A 4000 x 3000 photo-like JPEG (smooth gradients and noise, no metadata) and a PNG of its decoded pixels: the PNG is
// read whole, the JPEG band by band.
void make_large_jpeg(const ScratchDir& dir, std::int64_t width = 4000, std::int64_t height = 3000,
                     const std::string& name = "big") {
  io::Image image;
  image.width = width;
  image.height = height;
  image.channels = 3;
  image.data8.resize(static_cast<std::size_t>(image.width * image.height * 3));
  std::uint32_t state = 99;
  std::size_t i = 0;
  for (std::int64_t y = 0; y < image.height; ++y) {
    for (std::int64_t x = 0; x < image.width; ++x) {
      for (int c = 0; c < 3; ++c, ++i) {
        state = state * 1664525u + 1013904223u;
        const double wave = 110.0 + 90.0 * std::sin(static_cast<double>(x) / (150.0 + 40.0 * c)) *
                                        std::cos(static_cast<double>(y) / 170.0);
        image.data8[i] = static_cast<std::uint8_t>(std::lround(wave) + static_cast<long>(state >> 29));
      }
    }
  }
  io::write_image(dir / (name + ".jpg"), image, 90);
  io::write_image(dir / (name + ".png"), io::read_image(dir / (name + ".jpg")));
}

TEST(BandedInput, JpegsReadBandByBandGiveTheWholeImagesResult) {
  ScratchDir dir("banded-input");
  make_large_jpeg(dir);
  // The thumbnail of the JPEG, and of the PNG of its pixels, holds a window of rows, not 36 MB of pixels (about 30 MB
  // less natively, 15 MB under qemu-user, whose own memory blurs the difference); the PNG with alpha is read whole.
  test::CommandResult r;
  io::Image with_alpha = io::read_image(dir / "big.png");
  {
    io::Image rgba = with_alpha;
    rgba.channels = 4;
    rgba.data8.resize(0);
    for (std::size_t i = 0; i < with_alpha.data8.size(); i += 3) {
      rgba.data8.insert(rgba.data8.end(), {with_alpha.data8[i], with_alpha.data8[i + 1], with_alpha.data8[i + 2], 255});
    }
    io::write_image(dir / "alpha.png", rgba);
  }
  const long banded_peak = test::rsz_usage(dir, "thumbnail -i big.jpg -o t_jpeg.png --size 512 --strip -q", "ru_maxrss");
  const long png_peak = test::rsz_usage(dir, "thumbnail -i big.png -o t_png.png --size 512 --strip -q", "ru_maxrss");
  const long whole_peak = test::rsz_usage(dir, "thumbnail -i alpha.png -o t_alpha.png --size 512 --strip -q --alpha straight", "ru_maxrss");
  EXPECT_GT(banded_peak, 0);
  EXPECT_GT(png_peak, 0);
  EXPECT_GT(whole_peak - banded_peak, 10 * 1024) << "banded " << banded_peak << " KiB, whole " << whole_peak << " KiB";
  EXPECT_GT(whole_peak - png_peak, 10 * 1024) << "PNG rows " << png_peak << " KiB, whole " << whole_peak << " KiB";
  EXPECT_TRUE(test::read_file(dir / "t_jpeg.png") == test::read_file(dir / "t_png.png"));
  {  // and the same samples as the whole read (straight alpha: the colour channels are resampled as they are)
    const io::Image rows = io::read_image(dir / "t_png.png");
    const io::Image whole = io::read_image(dir / "t_alpha.png");
    ASSERT_EQ(whole.channels, 4);
    ASSERT_EQ(rows.data8.size() / 3, whole.data8.size() / 4);
    for (std::size_t p = 0; p < rows.data8.size() / 3; ++p) {
      for (std::size_t c = 0; c < 3; ++c) ASSERT_EQ(rows.data8[p * 3 + c], whole.data8[p * 4 + c]) << p;
    }
  }
  // The memory budget counts what is held: the JPEG and the PNG fit 30M, the same pixels read whole do not.
  for (const char* name : {"big.jpg", "big.png"}) {
    r = run_rsz(dir, std::string("thumbnail -i ") + name + " -o t_budget.png --size 512 --strip -q --max-memory 30M");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(test::read_file(dir / "t_budget.png") == test::read_file(dir / "t_png.png")) << name;
  }
  r = run_rsz(dir, "thumbnail -i alpha.png -o t_refused.png --size 512 --strip -q --max-memory 30M");
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("over the memory budget of 30.0 MiB"), std::string::npos) << r.err;
  // Under a budget below the window, the refusal says what is held: the file and a window of decoded rows. Decoded
  // at half size (--shrink-on-load: 4000x3000 to a 512 box leaves 2x), the image fits whole under 16M.
  r = run_rsz(dir, "thumbnail -i big.jpg -o t_small.png --size 512 --strip -q --max-memory 16M");
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("of decoded rows), over the memory budget of 16.0 MiB"), std::string::npos) << r.err;
  r = run_rsz(dir, "thumbnail -i big.jpg -o t_small.png --size 512 --strip -q --max-memory 16M --shrink-on-load");
  EXPECT_EQ(r.status, 0) << r.err;
  // Several output bands, input windows that slide (16 MB windows of 12 KB rows), every mode; PNG outputs, and JPEG
  // outputs for the thumbnails.
  const char* commands[] = {
      "thumbnail --size 300x200 --fit cover",
      "thumbnail --size 640 --no-antialias",
      "thumbnail --size 256 --grayscale -j 1",
      "resample --scale 0.6 --antialias",  // 1800 rows: 13 output bands
      "resample --scale 0.31 --mode nearest",
      "resample --size 50%",
      "resample --scale 1.2,0.3 --antialias",
      "resample --size 1000x1000 --fit contain",  // padded: read whole
      "resample --size 300x --antialias --backend reference",
  };
  int n = 0;
  for (const std::string command : commands) {
    for (const char* ext : {".png", ".jpg"}) {
      if (std::string(ext) == ".jpg" && command.rfind("thumbnail", 0) != 0) continue;
      const std::string name = "c" + std::to_string(n++);
      r = run_rsz(dir, command + " -i big.jpg --strip -q -o " + name + "_jpeg" + ext);
      ASSERT_EQ(r.status, 0) << command << "\n" << r.err;
      r = run_rsz(dir, command + " -i big.png --strip -q -o " + name + "_png" + ext);
      ASSERT_EQ(r.status, 0) << command << "\n" << r.err;
      EXPECT_TRUE(test::read_file(dir / (name + "_jpeg" + ext)) == test::read_file(dir / (name + "_png" + ext)))
          << command << " " << ext;
    }
  }
}

// A JPEG run with two threads or more: one thread decodes it into a ring of two steps of rows and 32 more (steps of
// 64 rows, or of four times what one output row reads: a ring of 160 rows here, 352 for 40 rows an output row) while
// the others resample and encode the rows already decoded. The same bytes as one thread and as the PNG of its
// pixels, for every thread count, filters that read 2 to 130 rows an output row, rings that wrap, an image shorter
// than the ring and one shorter than a decoder step; damage midway fails the input (the decoder's error reaches the
// job), writing nothing.
TEST(BandedInput, AJpegDecodedWhileItIsResampledGivesTheSameBytes) {
  ScratchDir dir("background-decode");
  make_large_jpeg(dir, 1500, 1000, "mid");
  make_large_jpeg(dir, 300, 100, "short");
  make_large_jpeg(dir, 40, 9, "tiny");
  const std::pair<const char*, const char*> runs[] = {
      {"mid", "resample --scale 0.5"},
      {"mid", "thumbnail --size 300"},
      {"mid", "resample --scale 0.37 --antialias"},
      {"mid", "resample --size 700x900 --mode nearest"},
      {"mid", "resample --scale 1,0.05 --antialias"},   // 40 rows an output row: steps of 160 rows
      {"mid", "resample --scale 1,0.016 --antialias"},  // about 130 rows an output row: the whole image
      {"short", "resample --scale 0.5 --antialias"},
      {"tiny", "resample --scale 2"},
  };
  for (const auto& [name, command_text] : runs) {
    const std::string command = command_text;
    const std::string png = "p.png";
    auto r = run_rsz(dir, command + " -i " + name + ".png --strip -q -j 1 -o " + png);
    ASSERT_EQ(r.status, 0) << command << "\n" << r.err;
    for (const char* threads : {"1", "2", "3"}) {
      const std::string out = std::string("j") + threads + ".png";
      r = run_rsz(dir, command + " -i " + name + ".jpg --strip -q -j " + threads + " -o " + out);
      ASSERT_EQ(r.status, 0) << command << "\n" << r.err;
      EXPECT_TRUE(test::read_file(dir / out) == test::read_file(dir / png)) << name << ": " << command << " -j " << threads;
    }
  }
  std::string bytes = test::read_file(dir / "mid.jpg");
  for (std::size_t at = bytes.size() / 2; at < bytes.size() / 2 + 200; ++at) bytes[at] = '\xff';
  test::write_file(dir / "broken.jpg", bytes);
  for (const char* threads : {"1", "2"}) {
    const auto r = run_rsz(dir, std::string("resample -i broken.jpg -o broken.png --scale 0.5 -q -j ") + threads);
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_NE(r.err.find("broken.jpg"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir / "broken.png"));
  }
}

// Damage past the rows a thumbnail reads still fails the input, as a whole read does: the rest of the file is
// decoded before the output is kept. Nothing is written.
TEST(BandedInput, DamageAfterTheLastRowReadFailsTheInput) {
  ScratchDir dir("banded-damage");
  make_large_jpeg(dir);
  std::string bytes = test::read_file(dir / "big.jpg");
  // Bytes near the end of the entropy-coded data (before the EOI marker) replaced: libjpeg warns of corrupt data.
  for (std::size_t at = bytes.size() - 400; at < bytes.size() - 300; ++at) bytes[at] = '\xff';
  test::write_file(dir / "damaged.jpg", bytes);
  const auto r = run_rsz(dir, "resample -i damaged.jpg -o out.png --scale 0.01 --output-offsets 0 -q");
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("damaged.jpg"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "out.png"));
}

// --shrink-on-load: libjpeg decodes at 1/2, 1/4 or 1/8 first. The same output size, close to the exact result but
// not the same bits; an EXIF-oriented JPEG (read whole) is shrunk too, upright. Without a 4x shrink nothing changes.
TEST(BandedInput, ShrinkOnLoadIsCloseButNotExact) {
  ScratchDir dir("shrink-on-load");
  make_large_jpeg(dir);
  test::write_file(dir / "turned.jpg", test::with_exif_orientation(test::read_file(dir / "big.jpg"), 6));
  for (const char* name : {"big", "turned"}) {
    const std::string in = std::string("thumbnail -i ") + name + ".jpg --size 400 --strip -q";
    ASSERT_EQ(run_rsz(dir, in + " -o exact.png").status, 0);
    const auto r = run_rsz(dir, in + " -o fast.png --shrink-on-load");
    ASSERT_EQ(r.status, 0) << r.err;
    const io::Image exact = io::read_image(dir / "exact.png");
    const io::Image fast = io::read_image(dir / "fast.png");
    ASSERT_EQ(fast.width, exact.width) << name;
    ASSERT_EQ(fast.height, exact.height) << name;
    EXPECT_EQ(exact.width, std::string(name) == "big" ? 400 : 300) << name;
    double total = 0.0;
    for (std::size_t i = 0; i < exact.data8.size(); ++i) total += std::abs(exact.data8[i] - fast.data8[i]);
    const double mean = total / static_cast<double>(exact.data8.size());
    EXPECT_GT(mean, 0.0) << name << ": the shrunk decode gave the exact bits";
    EXPECT_LT(mean, 3.0) << name;
  }
  // A 2x shrink leaves no room for a DCT shrink: the exact result.
  ASSERT_EQ(run_rsz(dir, "resample -i big.jpg --scale 0.5 --antialias --strip -q -o a.png").status, 0);
  ASSERT_EQ(run_rsz(dir, "resample -i big.jpg --scale 0.5 --antialias --strip -q -o b.png --shrink-on-load").status, 0);
  EXPECT_TRUE(test::read_file(dir / "a.png") == test::read_file(dir / "b.png"));
}

}  // namespace
}  // namespace rsz
