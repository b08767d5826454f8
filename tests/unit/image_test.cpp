// rsz::io images: PNG fixtures (tests/data/images, made by tests/data/make_image_fixtures.py), round trips through
// every writable format, JPEG EXIF orientation, the pixel limit, refused and damaged files, atomic writes, and the
// image <-> tensor value mapping (exhaustive identity checks, premultiplied alpha, strided views).
#include "rsz/io/image.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "rsz/error.h"
#include "rsz/float16.h"
#include "rsz/tensor.h"
#include "support/scratch_test.h"
#include "support/test_util.h"

namespace rsz::io {
namespace {

namespace fs = std::filesystem;
using test::read_file;
using test::write_file;
using test::exif_segment;
using test::with_exif_orientation;

std::string fixture(const std::string& name) { return std::string(RSZ_TEST_DATA_DIR) + "/images/" + name; }


// Runs `f`, expecting rsz::Error with `code` and a one-line message that contains every one of `parts`.
void expect_error(const std::function<void()>& f, ErrorCode code, std::initializer_list<std::string> parts) {
  try {
    f();
    ADD_FAILURE() << "no rsz::Error thrown";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_EQ(e.code(), code) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    for (const std::string& part : parts) EXPECT_NE(message.find(part), std::string::npos) << message;
  }
}

// A deterministic image whose samples are spread over the whole range.
Image make_image(std::int64_t width, std::int64_t height, int channels, int bit_depth, std::uint32_t seed = 1) {
  Image image;
  image.width = width;
  image.height = height;
  image.channels = channels;
  image.bit_depth = bit_depth;
  const auto samples = static_cast<std::size_t>(width * height * channels);
  std::uint32_t state = seed;
  auto next = [&state] {
    state = state * 1664525u + 1013904223u;
    return state >> 8;
  };
  if (bit_depth == 8) {
    image.data8.resize(samples);
    for (auto& s : image.data8) s = static_cast<std::uint8_t>(next() & 0xff);
  } else {
    image.data16.resize(samples);
    for (auto& s : image.data16) s = static_cast<std::uint16_t>(next() & 0xffff);
  }
  return image;
}

Image make_image8(std::int64_t width, std::int64_t height, int channels, std::vector<std::uint8_t> data) {
  Image image;
  image.width = width;
  image.height = height;
  image.channels = channels;
  image.bit_depth = 8;
  image.data8.assign(data.begin(), data.end());
  return image;
}

void expect_same_image(const Image& actual, const Image& expected) {
  ASSERT_EQ(actual.width, expected.width);
  ASSERT_EQ(actual.height, expected.height);
  ASSERT_EQ(actual.channels, expected.channels);
  ASSERT_EQ(actual.bit_depth, expected.bit_depth);
  EXPECT_EQ(actual.data8, expected.data8);
  EXPECT_EQ(actual.data16, expected.data16);
}

void expect_info(const ImageInfo& info, std::int64_t width, std::int64_t height, int channels, int bit_depth,
                 const std::string& format) {
  EXPECT_EQ(info.width, width);
  EXPECT_EQ(info.height, height);
  EXPECT_EQ(info.channels, channels);
  EXPECT_EQ(info.bit_depth, bit_depth);
  EXPECT_EQ(info.format, format);
}

class ImageTest : public test::ScratchTest {};

// ---------------------------------------------------------------------------------------------------------------
// Paths

// tensor_to_image quantizes straight samples as round(v * M) in double, saturated, NaN and v <= 0 giving 0: checked
// against std::round for the floats around every rounding boundary (k + 0.5) / M at 8 and 16 bits (each side, a
// few ulps), random values, tiny and huge ones and the specials, in float32 and float16 tensors.
TEST(TensorToImage, QuantizesAsRoundInDouble) {
  std::vector<float> v = {0.0f, -0.0f, 1.0f, -1.0f, 1e-30f, 1e-45f, 0.5f / 255.0f, 2.0f, 1e30f,
                          std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                          std::numeric_limits<float>::quiet_NaN()};
  for (const double max : {255.0, 65535.0}) {
    for (int k = 0; k < static_cast<int>(max); k += max > 255.0 ? 97 : 1) {
      float x = static_cast<float>((k + 0.5) / max);
      for (int step = 0; step < 4; ++step) x = std::nextafter(x, 0.0f);
      for (int step = 0; step < 9; ++step, x = std::nextafter(x, 2.0f)) v.push_back(x);
    }
  }
  std::uint32_t state = 5;
  for (int i = 0; i < 4000; ++i) {
    state = state * 1664525u + 1013904223u;
    v.push_back(static_cast<float>(state >> 8) / 16777216.0f * 1.2f - 0.1f);
  }
  const auto expected = [](float x, double max) -> std::uint32_t {
    if (!(x > 0.0f)) return 0;
    const double scaled = static_cast<double>(x) * max;
    return scaled >= max ? static_cast<std::uint32_t>(max) : static_cast<std::uint32_t>(std::round(scaled));
  };
  const auto width = static_cast<std::int64_t>(v.size());
  for (const DataType type : {DataType::Float32, DataType::Float16}) {
    std::vector<float> f32 = v;
    std::vector<std::uint16_t> f16(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) {
      f16[i] = float_to_float16_bits(v[i]);
      if (type == DataType::Float16) f32[i] = float16_bits_to_float(f16[i]);
    }
    const void* data = type == DataType::Float32 ? static_cast<const void*>(f32.data()) : f16.data();
    const ConstTensorView view(data, type, {1, 1, 1, width});
    const io::Image eight = io::tensor_to_image(view, 8);
    const io::Image sixteen = io::tensor_to_image(view, 16);
    for (std::size_t i = 0; i < v.size(); ++i) {
      ASSERT_EQ(eight.data8[i], expected(f32[i], 255.0)) << to_string(type) << " value " << f32[i];
      ASSERT_EQ(sixteen.data16[i], expected(f32[i], 65535.0)) << to_string(type) << " value " << f32[i];
    }
  }
  // Three planes interleaved into RGB samples (8-bit RGB is packed and interleaved eight pixels a step, writing a
  // few bytes ahead), rows of widths that are no multiple of 8 (the vector paths' tails) and of 1 to 25 pixels, on two
  // rows: the same values, and nothing written past the image.
  for (std::int64_t w = 1; w <= 1001; w += w < 25 ? 1 : 976) {
    ASSERT_GE(v.size(), static_cast<std::size_t>(6 * w));
    const ConstTensorView rgb(v.data(), DataType::Float32, {1, 3, 2, w});
    const io::Image eight = io::tensor_to_image(rgb, 8);
    const io::Image sixteen = io::tensor_to_image(rgb, 16);
    ASSERT_EQ(eight.data8.size(), static_cast<std::size_t>(6 * w));
    for (std::int64_t c = 0; c < 3; ++c) {
      for (std::int64_t y = 0; y < 2; ++y) {
        for (std::int64_t x = 0; x < w; ++x) {
          const float value = v[static_cast<std::size_t>((c * 2 + y) * w + x)];
          const auto at = static_cast<std::size_t>((y * w + x) * 3 + c);
          ASSERT_EQ(eight.data8[at], expected(value, 255.0)) << "width " << w << " value " << value;
          ASSERT_EQ(sixteen.data16[at], expected(value, 65535.0)) << "width " << w << " value " << value;
        }
      }
    }
  }
}

TEST(ImagePathTest, KnowsTheWritableExtensionsCaseInsensitively) {
  for (const char* name : {"a.png", "a.PNG", "b/c.jpg", "c.JPEG", "d.bmp", "e.tif", "f.TIFF", "g.webp", "h.ppm",
                           "i.pgm", "dir.png/x.Jpg"}) {
    EXPECT_TRUE(is_image_path(name)) << name;
  }
  for (const char* name : {"a", "a.npy", "a.gif", "a.png.txt", "png", ".png.bak", "a.pbm", "a.jp"}) {
    EXPECT_FALSE(is_image_path(name)) << name;
  }
}

TEST(ImagePathTest, ReadsPbmAndPnmTooButWritesNeither) {
  for (const char* name : {"a.png", "c.JPEG", "h.ppm", "i.pgm", "j.pbm", "k.PNM"}) {
    EXPECT_TRUE(is_readable_image_path(name)) << name;
  }
  for (const char* name : {"a", "a.npy", "a.jxl.txt", "a.pbm.txt", "pnm"}) {
    EXPECT_FALSE(is_readable_image_path(name)) << name;
  }
  EXPECT_FALSE(is_image_path("j.pbm"));
  EXPECT_FALSE(is_image_path("k.pnm"));
  for (const char* name : {"g.GIF", "h.heic", "i.HEIF", "j.avif"}) EXPECT_TRUE(is_readable_image_path(name)) << name;
  for (const char* name : {"g.gif", "h.heic"}) EXPECT_FALSE(is_image_path(name)) << name;  // read only
  EXPECT_TRUE(is_image_path("j.AVIF"));  // read and written
  EXPECT_TRUE(is_image_path("k.jxl"));
}

// ---------------------------------------------------------------------------------------------------------------
// PNG

TEST_F(ImageTest, PngRoundTripsEveryChannelCountAt8And16Bits) {
  for (const int bit_depth : {8, 16}) {
    for (int channels = 1; channels <= 4; ++channels) {
      SCOPED_TRACE("channels " + std::to_string(channels) + ", bit depth " + std::to_string(bit_depth));
      const Image image =
          make_image(13, 7, channels, bit_depth, static_cast<std::uint32_t>(channels * 100 + bit_depth));
      const std::string file =
          path("round_trip_" + std::to_string(channels) + "_" + std::to_string(bit_depth) + ".PNG");
      write_image(file, image);
      expect_same_image(read_image(file), image);
      expect_info(read_image_info(file), 13, 7, channels, bit_depth, "png");
    }
  }
}

// Scaled decode is a capability of the codec table's rows: JPEG decodes at 1/2, 1/4 or 1/8 (max_shrink 8, and a
// shrunk read is that size), the other formats at full size only.
TEST_F(ImageTest, ScaledDecodeIsACodecCapability) {
  const std::string jpeg = (dir_ / "s.jpg").string();
  write_image(jpeg, make_image(40, 24, 3, 8, 3));
  EXPECT_EQ(read_image_info(jpeg).max_shrink, 8);
  ImageReadOptions quarter;
  quarter.jpeg_shrink = 4;
  const Image shrunk = read_image(jpeg, quarter);
  EXPECT_EQ(shrunk.width, 10);
  EXPECT_EQ(shrunk.height, 6);
  for (const char* ext : {".png", ".bmp", ".tif", ".webp", ".ppm"}) {
    const std::string path = (dir_ / (std::string("s") + ext)).string();
    write_image(path, make_image(40, 24, 3, 8, 3));
    EXPECT_EQ(read_image_info(path).max_shrink, 1) << ext;
  }
}

// PNGs without alpha that are not interlaced are read row by row (open_image_rows, as rsz resample reads them): in
// bands of any size the rows are read_image's, 16-bit samples in host order, with the metadata; the others (alpha,
// interlaced) give no rows and are read whole. A damaged file fails as read_image fails.
TEST_F(ImageTest, PngRowsAreTheWholeReadsRows) {
  for (const char* name : {"gray1.png", "gray2.png", "gray4.png", "palette1.png", "palette8.png", "rgb16.png"}) {
    SCOPED_TRACE(name);
    const Image whole = read_image(fixture(name));
    EXPECT_TRUE(read_image_info(fixture(name)).rows_in_order);
    const std::unique_ptr<ImageRows> rows = open_image_rows(fixture(name));
    ASSERT_NE(rows, nullptr);
    const Image& header = rows->header();
    EXPECT_EQ(header.width, whole.width);
    EXPECT_EQ(header.height, whole.height);
    EXPECT_EQ(header.channels, whole.channels);
    EXPECT_EQ(header.bit_depth, whole.bit_depth);
    const std::size_t row_bytes = static_cast<std::size_t>(whole.width * whole.channels * whole.bit_depth / 8);
    std::vector<std::uint8_t> got(row_bytes * static_cast<std::size_t>(whole.height));
    for (std::int64_t y = 0; y < whole.height; y += 3) {
      rows->read(got.data() + row_bytes * static_cast<std::size_t>(y), std::min<std::int64_t>(3, whole.height - y));
    }
    const auto* want = whole.bit_depth == 16 ? reinterpret_cast<const std::uint8_t*>(whole.data16.data())
                                             : whole.data8.data();
    EXPECT_EQ(std::memcmp(got.data(), want, got.size()), 0);
  }
  for (const char* name : {"rgb8_interlaced.png", "rgb8_trns.png", "gray8_trns.png", "palette4_trns.png"}) {
    EXPECT_FALSE(read_image_info(fixture(name)).rows_in_order) << name;
    EXPECT_EQ(open_image_rows(fixture(name)), nullptr) << name;
  }
  // A PNG written with metadata: the rows' header carries its profile and EXIF as read_image's image does.
  Image image = make_image(30, 20, 3, 8, 5);
  image.exif = std::string("MM\0*\0\0\0\x08\0\0", 10);
  write_image(path("meta.png"), image);
  EXPECT_EQ(open_image_rows(path("meta.png"))->header().exif, image.exif);
  // Damage: the rows fail as the whole read fails, with its message.
  std::string whole_error;
  try {
    read_image(fixture("bad_crc.png"));
  } catch (const Error& e) {
    whole_error = e.what();
  }
  ASSERT_FALSE(whole_error.empty());
  std::string rows_error;
  try {
    const std::unique_ptr<ImageRows> rows = open_image_rows(fixture("bad_crc.png"));
    if (rows) {
      const Image& h = rows->header();
      std::vector<std::uint8_t> buffer(static_cast<std::size_t>(h.width * h.channels * h.bit_depth / 8 * h.height));
      rows->read(buffer.data(), h.height);
    }
  } catch (const Error& e) {
    rows_error = e.what();
  }
  EXPECT_EQ(rows_error, whole_error);
}

TEST(ImagePngFixtureTest, Palette8ExpandsToRgb) {
  const Image image = read_image(fixture("palette8.png"));
  expect_same_image(image, make_image8(4, 2, 3, {255, 0,  0,  0,   255, 0,   0, 0, 255, 255, 255, 255,  //
                                                 10,  20, 30, 255, 255, 255, 0, 0, 255, 0,   255, 0}));
  expect_info(read_image_info(fixture("palette8.png")), 4, 2, 3, 8, "png");
}

TEST(ImagePngFixtureTest, Palette4WithTransparencyExpandsToRgba) {
  const Image image = read_image(fixture("palette4_trns.png"));
  expect_same_image(image, make_image8(3, 2, 4, {255, 0,   0,   0,   0, 255, 0,   128, 0, 0,   255, 255,  //
                                                 255, 255, 255, 255, 0, 0,   255, 255, 0, 255, 0,   128}));
  expect_info(read_image_info(fixture("palette4_trns.png")), 3, 2, 4, 8, "png");
}

TEST(ImagePngFixtureTest, Palette1ExpandsToRgb) {
  const std::vector<int> indices = {0, 1, 1, 0, 1, 0, 0, 1};
  std::vector<std::uint8_t> expected;
  for (const int i : indices) {
    const std::vector<std::uint8_t> colour =
        i == 0 ? std::vector<std::uint8_t>{10, 20, 30} : std::vector<std::uint8_t>{200, 100, 50};
    expected.insert(expected.end(), colour.begin(), colour.end());
  }
  expect_same_image(read_image(fixture("palette1.png")), make_image8(8, 1, 3, expected));
}

TEST(ImagePngFixtureTest, LowBitGrayExpandsToTheFull8BitRange) {
  expect_same_image(read_image(fixture("gray1.png")),
                    make_image8(10, 1, 1, {255, 0, 255, 255, 0, 0, 255, 0, 255, 255}));
  expect_same_image(read_image(fixture("gray2.png")), make_image8(5, 1, 1, {0, 85, 170, 255, 170}));
  std::vector<std::uint8_t> gray4;
  for (int v = 0; v < 16; ++v) gray4.push_back(static_cast<std::uint8_t>(17 * v));
  expect_same_image(read_image(fixture("gray4.png")), make_image8(16, 1, 1, gray4));
  expect_info(read_image_info(fixture("gray2.png")), 5, 1, 1, 8, "png");
}

TEST(ImagePngFixtureTest, TransparencyChunkBecomesAnAlphaChannel) {
  expect_same_image(read_image(fixture("gray8_trns.png")), make_image8(3, 1, 2, {0, 255, 50, 0, 200, 255}));
  expect_same_image(read_image(fixture("rgb8_trns.png")), make_image8(2, 1, 4, {10, 20, 30, 0, 40, 50, 60, 255}));
  const Image gray16 = read_image(fixture("gray16_trns.png"));
  ASSERT_EQ(gray16.bit_depth, 16);
  ASSERT_EQ(gray16.channels, 2);
  EXPECT_EQ(gray16.data16, (Samples16{0, 65535, 1000, 0, 65535, 65535}));
  expect_info(read_image_info(fixture("gray16_trns.png")), 3, 1, 2, 16, "png");
}

TEST(ImagePngFixtureTest, InterlacedAnd16BitFiles) {
  std::vector<std::uint8_t> expected;
  for (int y = 0; y < 5; ++y) {
    for (int x = 0; x < 7; ++x) {
      expected.push_back(static_cast<std::uint8_t>(30 * x));
      expected.push_back(static_cast<std::uint8_t>(50 * y));
      expected.push_back(static_cast<std::uint8_t>(x + y));
    }
  }
  expect_same_image(read_image(fixture("rgb8_interlaced.png")), make_image8(7, 5, 3, expected));
  const Image rgb16 = read_image(fixture("rgb16.png"));
  ASSERT_EQ(rgb16.bit_depth, 16);
  EXPECT_TRUE(rgb16.data8.empty());
  EXPECT_EQ(rgb16.data16, (Samples16{0, 1, 2, 256, 4660, 65535, 65534, 32768, 7}));
}

TEST(ImagePngFixtureTest, DamagedPngIsRefused) {
  expect_error([] { read_image(fixture("bad_crc.png")); }, ErrorCode::Format, {fixture("bad_crc.png") + ": ", "PNG"});
}

TEST(ImagePngFixtureTest, HugeHeaderIsRefusedBeforeDecoding) {
  // 70000 x 70000 RGB would need 14.7 GB; the refusal comes from the header alone.
  const std::string file = fixture("huge_header.png");
  expect_error([&] { read_image(file); }, ErrorCode::Format, {file + ": ", "70000 x 70000", "max_pixels"});
  expect_error([&] { read_image_info(file); }, ErrorCode::Format, {"70000 x 70000", "max_pixels"});
}

TEST_F(ImageTest, TruncatedPngIsRefused) {
  const Image image = make_image(64, 64, 3, 8);
  write_image(path("full.png"), image);
  const std::string bytes = read_file(path("full.png"));
  write_file(path("cut.png"), bytes.substr(0, bytes.size() / 2));
  expect_error([&] { read_image(path("cut.png")); }, ErrorCode::Format, {path("cut.png") + ": ", "truncated"});
  // The header is intact, so the header-level facts can still be read.
  expect_info(read_image_info(path("cut.png")), 64, 64, 3, 8, "png");
}

// ---------------------------------------------------------------------------------------------------------------
// OpenCV formats

TEST_F(ImageTest, LosslessFormatsRoundTripExactly) {
  struct Case {
    const char* name;
    int channels;
    int bit_depth;
    const char* format;
  };
  const Case cases[] = {
      {"a.bmp", 1, 8, "bmp"},   {"b.bmp", 3, 8, "bmp"},   {"c.tif", 1, 8, "tiff"},  {"d.tiff", 3, 8, "tiff"},
      {"e.TIF", 4, 8, "tiff"},  {"f.tif", 1, 16, "tiff"}, {"g.tif", 3, 16, "tiff"}, {"h.tif", 4, 16, "tiff"},
      {"i.ppm", 3, 8, "ppm"},   {"j.ppm", 3, 16, "ppm"},  {"k.pgm", 1, 8, "pgm"},   {"l.pgm", 1, 16, "pgm"},
      {"m.webp", 3, 8, "webp"},
  };
  std::uint32_t seed = 7;
  ImageWriteOptions lossless;
  lossless.lossless = true;  // WebP is lossy by default
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const Image image = make_image(19, 11, c.channels, c.bit_depth, seed++);
    write_image(path(c.name), image, lossless);
    expect_same_image(read_image(path(c.name)), image);
    expect_info(read_image_info(path(c.name)), 19, 11, c.channels, c.bit_depth, c.format);
  }
  EXPECT_EQ(folder_entries().size(), std::size(cases));  // no temporary files left behind
}

TEST_F(ImageTest, WebpKeepsAlphaLosslesslyAndWritesGrayAsRgb) {
  Image rgba = make_image(17, 9, 4, 8, 3);
  for (std::size_t i = 3; i < rgba.data8.size(); i += 4)
    rgba.data8[i] = static_cast<std::uint8_t>(1 + rgba.data8[i] % 255);
  ImageWriteOptions lossless;
  lossless.lossless = true;
  write_image(path("rgba.webp"), rgba, lossless);
  expect_same_image(read_image(path("rgba.webp")), rgba);
  expect_info(read_image_info(path("rgba.webp")), 17, 9, 4, 8, "webp");

  const Image gray = make_image(5, 4, 1, 8, 4);
  write_image(path("gray.webp"), gray, lossless);
  const Image back = read_image(path("gray.webp"));
  ASSERT_EQ(back.channels, 3);
  for (std::size_t i = 0; i < gray.data8.size(); ++i) {
    for (int k = 0; k < 3; ++k) EXPECT_EQ(back.data8[i * 3 + static_cast<std::size_t>(k)], gray.data8[i]);
  }
}

// WebP is lossy by default (quality 80, as Pillow): a "VP8 " bitstream, where lossless=true writes "VP8L" with the
// exact samples; a lower quality writes fewer bytes.
TEST_F(ImageTest, WebpIsLossyByDefault) {
  const Image image = make_image(64, 48, 3, 8, 11);
  ImageWriteOptions lossless;
  lossless.lossless = true;
  ImageWriteOptions low;
  low.quality = 30;
  write_image(path("lossy.webp"), image);
  write_image(path("lossless.webp"), image, lossless);
  write_image(path("low.webp"), image, low);
  const auto fourcc = [&](const char* name) {
    const std::string bytes = test::read_file(path(name));
    return bytes.size() >= 16 ? bytes.substr(12, 4) : std::string();
  };
  EXPECT_EQ(fourcc("lossy.webp"), "VP8 ");
  EXPECT_EQ(fourcc("low.webp"), "VP8 ");
  EXPECT_EQ(fourcc("lossless.webp"), "VP8L");
  expect_same_image(read_image(path("lossless.webp")), image);
  EXPECT_LT(fs::file_size(path("low.webp")), fs::file_size(path("lossy.webp")));
}

// A smooth image, which JPEG keeps closely.
Image gradient(std::int64_t width, std::int64_t height, int channels) {
  Image image;
  image.width = width;
  image.height = height;
  image.channels = channels;
  for (std::int64_t y = 0; y < height; ++y) {
    for (std::int64_t x = 0; x < width; ++x) {
      image.data8.push_back(static_cast<std::uint8_t>(x * 255 / (width - 1)));
      if (channels == 3) {
        image.data8.push_back(static_cast<std::uint8_t>(y * 255 / (height - 1)));
        image.data8.push_back(static_cast<std::uint8_t>(128 + (x - y) / 4));
      }
    }
  }
  return image;
}

// JPEG XL outputs (libjxl): lossless keeps the samples of every channel count at 8 and 16 bits; lossy (distance 1 by
// default, as cjxl's quality 90) is close to a smooth image and smaller at a lower quality; an ICC profile, EXIF and
// XMP come back, and colour written as sRGB reads back without a profile (as a PNG without one).
TEST_F(ImageTest, JpegXlIsLosslessOnRequestAndKeepsMetadata) {
  ImageWriteOptions lossless;
  lossless.lossless = true;
  for (const int bit_depth : {8, 16}) {
    for (const int channels : {1, 2, 3, 4}) {
      const Image image = make_image(19, 7, channels, bit_depth, static_cast<std::uint32_t>(channels + bit_depth));
      const std::string name = "c" + std::to_string(channels) + "_" + std::to_string(bit_depth) + ".jxl";
      write_image(path(name), image, lossless);
      const Image back = read_image(path(name));
      expect_same_image(back, image);
      EXPECT_EQ(back.icc_profile, "") << name;
      expect_info(read_image_info(path(name)), 19, 7, channels, bit_depth, "jxl");
    }
  }
  Image smooth = gradient(64, 48, 3);
  smooth.icc_profile = read_image(std::string(RSZ_TEST_DATA_DIR) + "/../../samples/photos/chelsea.png").icc_profile;
  ASSERT_FALSE(smooth.icc_profile.empty());
  smooth.exif = std::string("MM\0*\0\0\0\x08\0\0\0\0\0\0", 14);
  smooth.xmp = "<x:xmpmeta xmlns:x=\"adobe:ns:meta/\"/>";
  write_image(path("meta.jxl"), smooth, lossless);
  const Image meta = read_image(path("meta.jxl"));
  EXPECT_EQ(meta.icc_profile, smooth.icc_profile);
  EXPECT_EQ(meta.exif, smooth.exif);
  EXPECT_EQ(meta.xmp, smooth.xmp);
  const Image plain = gradient(64, 48, 3);
  write_image(path("lossy.jxl"), plain);
  const Image back = read_image(path("lossy.jxl"));
  ASSERT_EQ(back.data8.size(), plain.data8.size());
  double error = 0;
  for (std::size_t i = 0; i < back.data8.size(); ++i) error += std::abs(back.data8[i] - plain.data8[i]);
  EXPECT_LT(error / static_cast<double>(back.data8.size()), 2.0);
  ImageWriteOptions low;
  low.quality = 20;
  const Image noisy = make_image(64, 48, 3, 8, 9);
  write_image(path("q90.jxl"), noisy);
  write_image(path("q20.jxl"), noisy, low);
  EXPECT_LT(fs::file_size(path("q20.jxl")), fs::file_size(path("q90.jxl")));
}

// AVIF outputs (AV1 through libheif's encoder): lossless keeps the samples of every channel count (RGB coded as GBR
// planes with the identity matrix, alpha lossless; gray as three equal channels); lossy is 4:2:0 at quality 50 by default, close to a smooth image
// and smaller at a lower quality; ICC, EXIF and XMP come back; the file is AVIF by its brands.
TEST_F(ImageTest, AvifIsLosslessOnRequestAndKeepsMetadata) {
  ImageWriteOptions lossless;
  lossless.lossless = true;
  for (const int channels : {1, 2, 3, 4}) {
    Image image = make_image(23, 11, channels, 8, static_cast<std::uint32_t>(channels));
    const std::string name = "c" + std::to_string(channels) + ".avif";
    write_image(path(name), image, lossless);
    // Gray is written (and read back) as three equal channels, gray + alpha as RGBA.
    Image expected = image;
    if (channels <= 2) {
      expected.channels = channels + 2;
      expected.data8.clear();
      for (std::size_t i = 0; i < image.data8.size(); i += static_cast<std::size_t>(channels)) {
        expected.data8.insert(expected.data8.end(), 3, image.data8[i]);
        if (channels == 2) expected.data8.push_back(image.data8[i + 1]);
      }
    }
    EXPECT_EQ(channels_read_back(path(name), channels), expected.channels);
    expect_same_image(read_image(path(name)), expected);
    expect_info(read_image_info(path(name)), 23, 11, expected.channels, 8, "avif");
  }
  Image smooth = gradient(64, 48, 3);
  smooth.icc_profile.assign(132, '\0');  // an ICC header's fields that writers check: its size, RGB, 'acsp'
  smooth.icc_profile[3] = static_cast<char>(132);
  smooth.icc_profile.replace(16, 4, "RGB ");
  smooth.icc_profile.replace(36, 4, "acsp");
  smooth.exif = std::string("II*\0\x08\0\0\0\0\0\0\0\0\0", 14);
  smooth.xmp = "<x:xmpmeta xmlns:x=\"adobe:ns:meta/\"/>";
  write_image(path("lossy.avif"), smooth);
  const std::string bytes = test::read_file(path("lossy.avif"));
  EXPECT_EQ(bytes.substr(4, 8), "ftypavif");
  const Image back = read_image(path("lossy.avif"));
  ASSERT_EQ(back.data8.size(), smooth.data8.size());
  double error = 0;
  for (std::size_t i = 0; i < back.data8.size(); ++i) error += std::abs(back.data8[i] - smooth.data8[i]);
  EXPECT_LT(error / static_cast<double>(back.data8.size()), 3.0);
  EXPECT_EQ(back.icc_profile, smooth.icc_profile);
  EXPECT_EQ(back.exif, smooth.exif);
  EXPECT_EQ(back.xmp, smooth.xmp);
  ImageWriteOptions low;
  low.quality = 10;
  const Image noisy = make_image(64, 48, 3, 8, 9);
  write_image(path("q50.avif"), noisy);
  write_image(path("q10.avif"), noisy, low);
  EXPECT_LT(fs::file_size(path("q10.avif")), fs::file_size(path("q50.avif")));
  // 16-bit samples are not AVIF's here (8-bit outputs): refused by the format's check.
  EXPECT_NE(image_output_problem(path("deep.avif"), 4, 4, 3, 16), "");
}


TEST_F(ImageTest, JpegRoundTripsApproximately) {
  for (const int channels : {1, 3}) {
    SCOPED_TRACE(channels);
    const Image image = gradient(64, 48, channels);
    const std::string file = path(channels == 1 ? "gray.jpg" : "rgb.JPEG");
    write_image(file, image, 95);
    const Image back = read_image(file);
    ASSERT_EQ(back.channels, channels);
    ASSERT_EQ(back.width, 64);
    ASSERT_EQ(back.height, 48);
    int worst = 0;
    for (std::size_t i = 0; i < image.data8.size(); ++i) {
      worst = std::max(worst, std::abs(int{back.data8[i]} - int{image.data8[i]}));
    }
    EXPECT_LE(worst, 6);
    expect_info(read_image_info(file), 64, 48, channels, 8, "jpeg");
  }
  // Lower quality: a smaller file.
  write_image(path("low.jpg"), gradient(64, 48, 3), 10);
  EXPECT_LT(fs::file_size(path("low.jpg")), fs::file_size(path("rgb.JPEG")));
}

// ---------------------------------------------------------------------------------------------------------------
// JPEG EXIF orientation

// 3 x 2 blocks of 16 x 16 pixels, block colours A B C / D E F.
const std::uint8_t kBlockColours[6][3] = {{255, 0, 0},     {0, 255, 0}, {0, 0, 255},
                                          {255, 255, 255}, {0, 0, 0},   {255, 255, 0}};
constexpr int kBlock = 16;

Image blocks_image() {
  Image image;
  image.width = 3 * kBlock;
  image.height = 2 * kBlock;
  image.channels = 3;
  for (int y = 0; y < image.height; ++y) {
    for (int x = 0; x < image.width; ++x) {
      const auto* colour = kBlockColours[(y / kBlock) * 3 + x / kBlock];
      image.data8.insert(image.data8.end(), colour, colour + 3);
    }
  }
  return image;
}

// The block labels (0 = A ... 5 = F) of the upright image, row by row, for the stored image A B C / D E F.
struct Upright {
  int columns;
  int rows;
  std::vector<int> labels;
};

Upright upright_blocks(int orientation) {
  switch (orientation) {
    case 1: return {3, 2, {0, 1, 2, 3, 4, 5}};
    case 2: return {3, 2, {2, 1, 0, 5, 4, 3}};  // mirrored left-right
    case 3: return {3, 2, {5, 4, 3, 2, 1, 0}};  // turned 180 degrees
    case 4: return {3, 2, {3, 4, 5, 0, 1, 2}};  // mirrored top-bottom
    case 5: return {2, 3, {0, 3, 1, 4, 2, 5}};  // transposed
    case 6: return {2, 3, {3, 0, 4, 1, 5, 2}};  // stored turned 90 degrees anticlockwise: turn clockwise
    case 7: return {2, 3, {5, 2, 4, 1, 3, 0}};  // transverse
    case 8: return {2, 3, {2, 5, 1, 4, 0, 3}};  // stored turned 90 degrees clockwise: turn anticlockwise
    default: return {0, 0, {}};
  }
}

void expect_blocks(const Image& image, const Upright& expected) {
  ASSERT_EQ(image.width, expected.columns * kBlock);
  ASSERT_EQ(image.height, expected.rows * kBlock);
  ASSERT_EQ(image.channels, 3);
  for (int row = 0; row < expected.rows; ++row) {
    for (int column = 0; column < expected.columns; ++column) {
      const std::int64_t x = column * kBlock + kBlock / 2;
      const std::int64_t y = row * kBlock + kBlock / 2;
      const auto* want = kBlockColours[expected.labels[static_cast<std::size_t>(row * expected.columns + column)]];
      for (int k = 0; k < 3; ++k) {
        const int got = image.data8[static_cast<std::size_t>((y * image.width + x) * 3 + k)];
        EXPECT_NEAR(got, want[k], 40) << "block row " << row << " column " << column << " channel " << k;
      }
    }
  }
}

TEST_F(ImageTest, JpegExifOrientationIsAppliedByDefault) {
  write_image(path("plain.jpg"), blocks_image(), 100);
  const std::string plain = read_file(path("plain.jpg"));
  for (const bool little_endian : {false, true}) {
    for (int orientation = 1; orientation <= 8; ++orientation) {
      SCOPED_TRACE("orientation " + std::to_string(orientation) + (little_endian ? " II" : " MM"));
      const std::string file = path("o" + std::to_string(orientation) + ".jpg");
      write_file(file, with_exif_orientation(plain, orientation, little_endian));
      expect_blocks(read_image(file), upright_blocks(orientation));
      const ImageInfo info = read_image_info(file);
      EXPECT_EQ(info.width, upright_blocks(orientation).columns * kBlock);
      EXPECT_EQ(info.height, upright_blocks(orientation).rows * kBlock);

      ImageReadOptions stored;
      stored.apply_exif_orientation = false;
      expect_blocks(read_image(file, stored), upright_blocks(1));
      const ImageInfo stored_info = read_image_info(file, stored);
      EXPECT_EQ(stored_info.width, 3 * kBlock);
      EXPECT_EQ(stored_info.height, 2 * kBlock);
    }
  }
}

TEST_F(ImageTest, InvalidExifOrientationIsIgnored) {
  write_image(path("plain.jpg"), blocks_image(), 100);
  const std::string plain = read_file(path("plain.jpg"));
  write_file(path("bad.jpg"), with_exif_orientation(plain, 9));
  expect_blocks(read_image(path("bad.jpg")), upright_blocks(1));
  // An Exif segment cut short inside its directory: ignored, not read past.
  std::string segment = exif_segment(6, true);
  segment.resize(segment.size() - 10);
  segment[2] = 0;
  segment[3] = static_cast<char>(segment.size() - 2);
  write_file(path("short.jpg"), plain.substr(0, 2) + segment + plain.substr(2));
  expect_blocks(read_image(path("short.jpg")), upright_blocks(1));
}

// ---------------------------------------------------------------------------------------------------------------
// TIFF Orientation and BigTIFF, from files written here byte by byte

// What make_tiff writes: one strip of uncompressed 8-bit gray or RGB samples.
struct TiffSpec {
  std::uint64_t width = 0;
  std::uint64_t height = 0;
  int channels = 1;     // 1 (gray) or 3 (RGB)
  std::string samples;  // width * height * channels bytes, or "" for a file whose pixels are missing
  int orientation = 0;  // the Orientation tag (274); 0: none
  bool little = true;   // "II", else "MM"
  bool big = false;     // BigTIFF (magic 43, 8-byte offsets), else classic TIFF (magic 42)
  int size_type = 4;    // the type of ImageWidth and ImageLength: 3 SHORT, 4 LONG, 16 LONG8 (BigTIFF only)
};

std::string make_tiff(const TiffSpec& spec) {
  struct Entry {
    std::uint64_t tag;
    int type;
    std::vector<std::uint64_t> values;
  };
  const auto type_size = [](int type) -> std::size_t { return type == 3 ? 2 : type == 4 ? 4 : 8; };
  const std::size_t offset_size = spec.big ? 8 : 4;
  const int offset_type = spec.big ? 16 : 4;
  const auto channels = static_cast<std::uint64_t>(spec.channels);
  std::vector<Entry> entries = {{256, spec.size_type, {spec.width}},
                                {257, spec.size_type, {spec.height}},
                                {258, 3, std::vector<std::uint64_t>(spec.channels, 8)},
                                {259, 3, {1}},                          // no compression
                                {262, 3, {spec.channels == 1 ? 1u : 2u}},  // BlackIsZero or RGB
                                {273, offset_type, {0}},                // StripOffsets, set below
                                {277, 3, {channels}},
                                {278, 4, {spec.height}},
                                {279, offset_type, {spec.width * spec.height * channels}},
                                {284, 3, {1}}};  // interleaved samples
  if (spec.orientation != 0) {
    entries.insert(entries.begin() + 6, Entry{274, 3, {static_cast<std::uint64_t>(spec.orientation)}});
  }
  const std::size_t header = spec.big ? 16 : 8;
  const std::size_t directory = (spec.big ? 8 : 2) + entries.size() * (spec.big ? 20 : 12) + offset_size;
  std::size_t outside = 0;  // values too long for their entry follow the directory, then come the samples
  for (const Entry& e : entries) {
    if (e.values.size() * type_size(e.type) > offset_size) outside += e.values.size() * type_size(e.type);
  }
  entries[5].values[0] = header + directory + outside;
  std::string out = spec.little ? "II" : "MM";
  std::string more;
  const auto put = [&](std::string& into, std::uint64_t v, std::size_t size) {
    for (std::size_t i = 0; i < size; ++i) {
      into += static_cast<char>((v >> (8 * (spec.little ? i : size - 1 - i))) & 0xff);
    }
  };
  put(out, spec.big ? 43 : 42, 2);
  if (spec.big) {
    put(out, 8, 2);  // offset size
    put(out, 0, 2);
  }
  put(out, header, offset_size);  // the first directory
  put(out, entries.size(), spec.big ? 8 : 2);
  for (const Entry& e : entries) {
    put(out, e.tag, 2);
    put(out, static_cast<std::uint64_t>(e.type), 2);
    put(out, e.values.size(), offset_size);
    const std::size_t size = e.values.size() * type_size(e.type);
    if (size > offset_size) put(out, header + directory + more.size(), offset_size);
    for (const std::uint64_t v : e.values) put(size > offset_size ? more : out, v, type_size(e.type));
    if (size <= offset_size) put(out, 0, offset_size - size);
  }
  put(out, 0, offset_size);  // no next directory
  return out + more + spec.samples;
}

// A TIFF's Orientation tag (274) is applied as JPEG's EXIF orientation is: an upright image by default (sides
// swapped for 5..8, in read_image_info too), the stored one with apply_exif_orientation off. A 3 x 2 RGB image whose
// pixel labels 0..5 (A B C / D E F) come out where upright_blocks says; OpenCV alone refused 5..8 ("not a valid
// TIFF": its decoder turns TIFFs itself), and turned 2..4 even when the stored pixels were asked for.
TEST_F(ImageTest, TiffOrientationIsAppliedLikeJpegExif) {
  const auto sample = [](int label, int channel) { return static_cast<std::uint8_t>(10 + 40 * label + 7 * channel); };
  std::string stored;
  for (int label = 0; label < 6; ++label) {
    for (int k = 0; k < 3; ++k) stored += static_cast<char>(sample(label, k));
  }
  ImageReadOptions as_stored;
  as_stored.apply_exif_orientation = false;
  for (const bool big : {false, true}) {
    for (const bool little : {true, false}) {
      for (int orientation = 1; orientation <= 8; ++orientation) {
        SCOPED_TRACE("orientation " + std::to_string(orientation) + (little ? " II" : " MM") + (big ? " BigTIFF" : ""));
        TiffSpec spec;
        spec.width = 3;
        spec.height = 2;
        spec.channels = 3;
        spec.samples = stored;
        spec.orientation = orientation;
        spec.little = little;
        spec.big = big;
        const std::string file = path("o" + std::to_string(orientation) + ".tif");
        write_file(file, make_tiff(spec));
        const Upright upright = upright_blocks(orientation);
        Image expected;
        expected.width = upright.columns;
        expected.height = upright.rows;
        expected.channels = 3;
        for (const int label : upright.labels) {
          for (int k = 0; k < 3; ++k) expected.data8.push_back(sample(label, k));
        }
        expect_same_image(read_image(file), expected);
        expect_info(read_image_info(file), upright.columns, upright.rows, 3, 8, "tiff");
        expect_same_image(read_image(file, as_stored),
                          make_image8(3, 2, 3, std::vector<std::uint8_t>(stored.begin(), stored.end())));
        expect_info(read_image_info(file, as_stored), 3, 2, 3, 8, "tiff");
      }
    }
  }
  // Orientation 6 spelled out: stored 3 x 2 gray 1 2 3 / 4 5 6 is upright 2 x 3 4 1 / 5 2 / 6 3.
  TiffSpec gray;
  gray.width = 3;
  gray.height = 2;
  gray.samples = std::string("\x01\x02\x03\x04\x05\x06", 6);
  gray.orientation = 6;
  write_file(path("gray6.tif"), make_tiff(gray));
  expect_same_image(read_image(path("gray6.tif")), make_image8(2, 3, 1, {4, 1, 5, 2, 6, 3}));
  // Values outside 1..8 are ignored, as in JPEG.
  gray.orientation = 9;
  write_file(path("gray9.tif"), make_tiff(gray));
  expect_same_image(read_image(path("gray9.tif")), make_image8(3, 2, 1, {1, 2, 3, 4, 5, 6}));
}

// ---------------------------------------------------------------------------------------------------------------
// Pixel limit, damaged and foreign files

TEST_F(ImageTest, PixelLimitIsCheckedBeforeDecoding) {
  const Image image = make_image(16, 16, 3, 8);
  ImageReadOptions small;
  small.max_pixels = 255;
  ImageReadOptions exact;
  exact.max_pixels = 256;
  for (const char* name : {"a.png", "a.jpg", "a.bmp", "a.tif", "a.webp", "a.ppm"}) {
    SCOPED_TRACE(name);
    write_image(path(name), image);
    expect_error([&] { read_image(path(name), small); }, ErrorCode::Format, {path(name) + ": ", "16 x 16", "255"});
    expect_error([&] { read_image_info(path(name), small); }, ErrorCode::Format, {"16 x 16", "max_pixels"});
    EXPECT_EQ(read_image(path(name), exact).width, 16);
  }
}

TEST_F(ImageTest, JpegHeaderClaimingAHugeSizeIsRefused) {
  write_image(path("small.jpg"), make_image(16, 16, 3, 8), 90);
  std::string bytes = read_file(path("small.jpg"));
  const std::size_t sof = bytes.find("\xff\xc0", 2);
  ASSERT_NE(sof, std::string::npos);
  // Height and width 60000 (0xEA60): 3.6 gigapixels.
  bytes[sof + 5] = bytes[sof + 7] = static_cast<char>(0xea);
  bytes[sof + 6] = bytes[sof + 8] = static_cast<char>(0x60);
  write_file(path("huge.jpg"), bytes);
  expect_error([&] { read_image(path("huge.jpg")); }, ErrorCode::Format, {"60000 x 60000", "max_pixels"});
  expect_error([&] { read_image_info(path("huge.jpg")); }, ErrorCode::Format, {"60000 x 60000", "max_pixels"});
}

// BigTIFF's ImageWidth and ImageLength (SHORT, LONG or LONG8, either byte order) are read from the header: a small
// file decodes at its size, and a tiny file declaring more than max_pixels is refused before any decoding (a LONG8
// size used to be read halved, so 32768 x 32768 passed as 16384 x 16384 and was decoded: 1.1 GB, 11 s).
TEST_F(ImageTest, BigTiffSizesAreReadFromTheHeader) {
  for (const bool little : {true, false}) {
    for (const int type : {3, 4, 16}) {
      SCOPED_TRACE("type " + std::to_string(type) + (little ? " II" : " MM"));
      TiffSpec spec;
      spec.big = true;
      spec.little = little;
      spec.size_type = type;
      spec.width = 5;
      spec.height = 3;
      spec.samples = std::string("\x00\x10\x20\x30\x40\x50\x60\x70\x80\x90\xa0\xb0\xc0\xd0\xe0", 15);
      write_file(path("small.tif"), make_tiff(spec));
      expect_info(read_image_info(path("small.tif")), 5, 3, 1, 8, "tiff");
      expect_same_image(read_image(path("small.tif")),
                        make_image8(5, 3, 1, {0x00, 0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70, 0x80, 0x90, 0xa0,
                                              0xb0, 0xc0, 0xd0, 0xe0}));

      spec.samples.clear();  // the header alone: 40000 x 30000 (1.2 gigapixels) in a file of under 300 bytes
      spec.width = 40000;
      spec.height = 30000;
      const std::string huge = path("huge.tif");
      write_file(huge, make_tiff(spec));
      expect_error([&] { read_image(huge); }, ErrorCode::Format, {huge + ": ", "40000 x 30000", "max_pixels"});
      expect_error([&] { read_image_info(huge); }, ErrorCode::Format, {huge + ": ", "40000 x 30000", "max_pixels"});
    }
  }
  TiffSpec spec;
  spec.big = true;
  spec.size_type = 16;
  spec.width = 32768;  // 2^30 pixels
  spec.height = 32768;
  write_file(path("giga.tif"), make_tiff(spec));
  expect_error([&] { read_image_info(path("giga.tif")); }, ErrorCode::Format, {"32768 x 32768", "max_pixels"});
  spec.width = std::uint64_t{1} << 33;  // more than libtiff's 32 bits
  spec.height = 1;
  write_file(path("wide.tif"), make_tiff(spec));
  expect_error([&] { read_image_info(path("wide.tif")); }, ErrorCode::Format,
               {"not a valid TIFF file", "ImageWidth 8589934592"});
}

TEST(ImageDamagedTest, TruncatedJpegFixtureIsRefused) {
  const std::string file = fixture("truncated.jpg");
  expect_error([&] { read_image(file); }, ErrorCode::Format, {file + ": ", "truncated", "JPEG"});
}

TEST_F(ImageTest, JpegCutInHalfIsRefused) {
  write_image(path("full.jpg"), gradient(64, 64, 3), 95);
  const std::string bytes = read_file(path("full.jpg"));
  write_file(path("half.jpg"), bytes.substr(0, bytes.size() / 2));
  expect_error([&] { read_image(path("half.jpg")); }, ErrorCode::Format,
               {path("half.jpg") + ": ", "truncated", "end-of-image marker"});
  // Without its final FF D9 only.
  write_file(path("no_eoi.jpg"), bytes.substr(0, bytes.size() - 2));
  expect_error([&] { read_image(path("no_eoi.jpg")); }, ErrorCode::Format, {"truncated"});
  // Trailing bytes after the end-of-image marker are harmless.
  write_file(path("trailing.jpg"), bytes + std::string(100, '\0'));
  EXPECT_EQ(read_image(path("trailing.jpg")).width, 64);
}

TEST_F(ImageTest, TruncatedUncompressedFilesAreRefused) {
  for (const char* name : {"a.bmp", "a.ppm", "a.webp"}) {
    SCOPED_TRACE(name);
    write_image(path(name), make_image(32, 32, 3, 8));
    const std::string bytes = read_file(path(name));
    const std::string cut = std::string("cut_") + name;
    write_file(path(cut), bytes.substr(0, bytes.size() - 7));
    expect_error([&] { read_image(path(cut)); }, ErrorCode::Format, {path(cut) + ": ", "truncated"});
  }
}

// Plain (ASCII) PBM / PGM / PPM: the smallest complete files decode (one character a bitmap sample, a separator
// between gray and colour samples), and a file too short for the size its header claims is refused before decoding
// (the fuzzer's 36-byte P3 claiming 33333333 x 3 pixels made the decoder ask for 3 GB).
TEST_F(ImageTest, PlainPnmSizesAreCheckedAgainstTheirText) {
  write_file(path("bits.pbm"), "P1\n3 2\n010110\n");
  write_file(path("gray.pgm"), "P2\n2 2\n255\n0 64 128 255\n");
  write_file(path("rgb.ppm"), "P3 1 2 65535 0 1 2 65535 30000 7\n");
  const Image bits = read_image(path("bits.pbm"));
  EXPECT_EQ(bits.width, 3);
  EXPECT_EQ(bits.height, 2);
  EXPECT_EQ(bits.channels, 1);
  EXPECT_EQ(bits.data8[0], 255);  // 0 is white
  EXPECT_EQ(bits.data8[1], 0);    // 1 is black
  EXPECT_EQ(bits.data8[5], 255);
  const Image gray = read_image(path("gray.pgm"));
  EXPECT_EQ(gray.channels, 1);
  EXPECT_EQ(gray.bit_depth, 8);
  EXPECT_EQ(gray.data8[3], 255);
  EXPECT_EQ(gray.data8[1], 64);
  const Image rgb = read_image(path("rgb.ppm"));
  EXPECT_EQ(rgb.channels, 3);
  EXPECT_EQ(rgb.bit_depth, 16);
  EXPECT_EQ(rgb.height, 2);
  EXPECT_EQ(rgb.data16[3], 65535);
  EXPECT_EQ(rgb.data16[4], 30000);
  write_file(path("short.pbm"), "P1\n3 2\n01011");
  write_file(path("short.pgm"), "P2\n2 2\n255\n0 1 2");  // 4 samples need 7 characters
  write_file(path("huge.ppm"), "P3\n33333333#3131\n\n3#P53\n565");
  for (const char* name : {"short.pbm", "short.pgm", "huge.ppm"}) {
    SCOPED_TRACE(name);
    expect_error([&] { read_image(path(name)); }, ErrorCode::Format,
                 {path(name) + ": ", "truncated", "plain-text pixel array"});
  }
}

TEST_F(ImageTest, EmptyAndForeignFilesAreRefused) {
  write_file(path("empty.png"), "");
  expect_error([&] { read_image(path("empty.png")); }, ErrorCode::Format, {path("empty.png") + ": ", "empty", "PNG"});
  expect_error([&] { read_image_info(path("empty.png")); }, ErrorCode::Format, {"empty"});

  write_file(path("text.png"), "this is not an image\n");
  expect_error([&] { read_image(path("text.png")); }, ErrorCode::Format,
               {path("text.png") + ": ", "not an image file", "PNG, JPEG, BMP, TIFF, WebP, PPM/PGM, GIF, HEIC, AVIF and JPEG XL"});
  // None of the file's bytes are shown (an untrusted dataset could name a secret file): "this" is 74 68 69 73.
  const std::string said = test::error_message([&] { read_image(path("text.png")); }, ErrorCode::Format);
  EXPECT_EQ(said.find("74 68"), std::string::npos) << said;
  EXPECT_EQ(said.find("this"), std::string::npos) << said;

  // A JPEG signature followed by rubbish.
  write_file(path("rubbish.jpg"), std::string("\xff\xd8\xff\xe0\x00\x10JFIF", 10) + std::string(50, 'x'));
  expect_error([&] { read_image(path("rubbish.jpg")); }, ErrorCode::Format, {path("rubbish.jpg") + ": "});

  expect_error([&] { read_image(path("missing.png")); }, ErrorCode::Io, {path("missing.png") + ": ", "cannot open"});
  expect_error([&] { read_image(dir_.string()); }, ErrorCode::Io, {"folder"});
}

std::uint32_t crc32(const std::string& bytes) {
  std::uint32_t crc = 0xffffffffu;
  for (const char c : bytes) {
    crc ^= static_cast<unsigned char>(c);
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

std::string be32(std::uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8), static_cast<char>(v)};
}

// read_image_info first reads a prefix of the file; headers that lie further in are still found.
TEST_F(ImageTest, InfoFindsHeadersBehindLargeMetadata) {
  const Image image = make_image(21, 13, 3, 8);
  write_image(path("small.png"), image);
  const std::string png = read_file(path("small.png"));
  // A 400 kB private ancillary chunk ("prVt") right after IHDR (8 + 25 bytes).
  const std::string body = "prVt" + std::string(400000, 'x');
  const std::string chunk = be32(400000) + body + be32(crc32(body));
  write_file(path("big_meta.png"), png.substr(0, 33) + chunk + png.substr(33));
  expect_info(read_image_info(path("big_meta.png")), 21, 13, 3, 8, "png");
  expect_same_image(read_image(path("big_meta.png")), image);

  write_image(path("small.jpg"), image);
  const std::string jpg = read_file(path("small.jpg"));
  std::string segments;
  for (int i = 0; i < 6; ++i) segments += std::string("\xff\xe2\xff\xff", 4) + std::string(65533, 'y');  // APP2
  write_file(path("big_meta.jpg"), jpg.substr(0, 2) + segments + jpg.substr(2));
  expect_info(read_image_info(path("big_meta.jpg")), 21, 13, 3, 8, "jpeg");
  EXPECT_EQ(read_image(path("big_meta.jpg")).width, 21);
}

// Cut short anywhere or with any byte damaged, a file either reads or is refused with rsz::Error: never a crash,
// another exception type or a hang.
TEST_F(ImageTest, DamagedFilesOfEveryFormatNeverCrash) {
  const Image rgb = make_image(9, 7, 3, 8);
  for (const char* name : {"a.png", "a.jpg", "a.bmp", "a.tif", "a.webp", "a.ppm"}) {
    SCOPED_TRACE(name);
    write_image(path(name), rgb);
    const std::string bytes = read_file(path(name));
    const std::string damaged = path(std::string("damaged_") + name);
    auto try_read = [&](const std::string& content) {
      write_file(damaged, content);
      try {
        read_image_info(damaged);
      } catch (const Error&) {
      }
      try {
        const Image image = read_image(damaged);
        EXPECT_EQ(image.data8.size() + image.data16.size(),
                  static_cast<std::size_t>(image.width * image.height * image.channels));
      } catch (const Error& e) {
        EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
      }
    };
    for (std::size_t length = 0; length < bytes.size(); length += 1 + length / 64) try_read(bytes.substr(0, length));
    std::uint32_t state = 99;
    for (int trial = 0; trial < 150; ++trial) {
      std::string copy = bytes;
      for (int flips = 0; flips < 1 + trial % 3; ++flips) {
        state = state * 1664525u + 1013904223u;
        const std::size_t at = (state >> 8) % (trial % 2 == 0 ? std::min<std::size_t>(copy.size(), 64) : copy.size());
        copy[at] = static_cast<char>(copy[at] ^ static_cast<char>(1u << ((state >> 4) % 8)));
      }
      try_read(copy);
    }
  }
}

TEST_F(ImageTest, ContentDecidesTheFormatWhenReading) {
  const Image image = make_image(6, 5, 3, 8);
  write_image(path("really_a_png.png"), image);
  fs::rename(path("really_a_png.png"), path("named.jpg"));
  expect_same_image(read_image(path("named.jpg")), image);
  EXPECT_EQ(read_image_info(path("named.jpg")).format, "png");
}

// ---------------------------------------------------------------------------------------------------------------
// Writing: refusals and atomicity

TEST_F(ImageTest, UnknownExtensionIsRefused) {
  const Image image = make_image(4, 4, 3, 8);
  expect_error([&] { write_image(path("out.gif"), image); }, ErrorCode::Format,
               {path("out.gif") + ": ", "'.gif'", ".png, .jpg, .jpeg, .bmp, .tif, .tiff, .webp, .ppm, .pgm, .avif and .jxl"});
  expect_error([&] { write_image(path("noext"), image); }, ErrorCode::Format, {"no extension", ".png"});
  EXPECT_TRUE(folder_entries().empty());
}

TEST_F(ImageTest, FormatsThatCannotHoldTheImageAreRefused) {
  const Image rgb16 = make_image(4, 4, 3, 16);
  for (const char* name : {"a.jpg", "a.bmp", "a.webp"}) {
    expect_error([&] { write_image(path(name), rgb16); }, ErrorCode::Format,
                 {path(name) + ": ", "16-bit", ".png", ".tif/.tiff", ".ppm/.pgm"});
  }
  expect_error([&] { write_image(path("a.jpg"), make_image(4, 4, 4, 8)); }, ErrorCode::Format,
               {"JPEG cannot hold an alpha channel", ".png"});
  expect_error([&] { write_image(path("a.bmp"), make_image(4, 4, 4, 8)); }, ErrorCode::Format, {"alpha", ".png"});
  for (const char* name : {"a.jpg", "a.tif", "a.webp", "a.bmp", "a.ppm", "a.pgm"}) {
    expect_error([&] { write_image(path(name), make_image(4, 4, 2, 8)); }, ErrorCode::Format, {"gray + alpha", "PNG"});
  }
  expect_error([&] { write_image(path("a.ppm"), make_image(4, 4, 1, 8)); }, ErrorCode::Format, {".pgm"});
  expect_error([&] { write_image(path("a.pgm"), make_image(4, 4, 3, 8)); }, ErrorCode::Format, {".ppm"});
  expect_error([&] { write_image(path("a.jpg"), make_image(4, 4, 3, 8), 101); }, ErrorCode::InvalidArgument,
               {"quality", "1 to 100"});
  Image broken = make_image(4, 4, 3, 8);
  broken.data8.pop_back();
  expect_error([&] { write_image(path("a.png"), broken); }, ErrorCode::InvalidArgument, {"48 samples", "47"});
  EXPECT_TRUE(folder_entries().empty());
}

TEST_F(ImageTest, WritesReplaceAtomically) {
  write_file(path("target.jpg"), "old content");
  // A refused write leaves the existing target as it was.
  expect_error([&] { write_image(path("target.jpg"), make_image(4, 4, 3, 16)); }, ErrorCode::Format, {"16-bit"});
  EXPECT_EQ(read_file(path("target.jpg")), "old content");

  // A write that fails at the final rename (the target is a non-empty folder) removes its temporary file.
  fs::create_directories(path("folder.png"));
  write_file(path("folder.png") + "/keep", "x");
  expect_error([&] { write_image(path("folder.png"), make_image(4, 4, 3, 8)); }, ErrorCode::Io,
               {path("folder.png") + ": ", "cannot replace"});
  EXPECT_EQ(read_file(path("folder.png") + "/keep"), "x");

  // A missing parent folder is not created.
  expect_error([&] { write_image(path("no/such/folder/a.png"), make_image(4, 4, 3, 8)); }, ErrorCode::Io,
               {"temporary file"});
  EXPECT_FALSE(fs::exists(path("no")));

  // A successful write replaces the old content.
  const Image image = make_image(4, 4, 3, 8);
  write_image(path("target.jpg"), image);
  EXPECT_EQ(read_image(path("target.jpg")).width, 4);
  EXPECT_EQ(folder_entries(), (std::vector<std::string>{"folder.png", "target.jpg"}));
}

// ---------------------------------------------------------------------------------------------------------------
// Image <-> tensor

template <typename T>
float tensor_value(const Tensor& tensor, std::size_t index) {
  if constexpr (std::is_same_v<T, float>) {
    return tensor.data_as<float>()[index];
  } else {
    return tensor.data_as<Float16>()[index].to_float();
  }
}

TEST(ImageTensorTest, EveryEightBitValueRoundTripsInFloat32AndFloat16) {
  Image image;
  image.width = 256;
  image.height = 1;
  image.channels = 1;
  for (int v = 0; v < 256; ++v) image.data8.push_back(static_cast<std::uint8_t>(v));
  for (const DataType type : {DataType::Float32, DataType::Float16}) {
    SCOPED_TRACE(to_string(type));
    const Tensor tensor = image_to_tensor(image, type);
    EXPECT_EQ(tensor.sizes(), (Dims{1, 1, 1, 256}));
    EXPECT_EQ(tensor.dtype(), type);
    for (std::size_t v = 0; v < 256; ++v) {
      const float value = type == DataType::Float32 ? tensor_value<float>(tensor, v) : tensor_value<Float16>(tensor, v);
      EXPECT_NEAR(value, static_cast<double>(v) / 255.0, type == DataType::Float32 ? 1e-7 : 5e-4);
    }
    expect_same_image(tensor_to_image(tensor.view(), 8), image);
  }
  const Tensor tensor = image_to_tensor(image, DataType::Float32);
  EXPECT_EQ(tensor.data_as<float>()[0], 0.0f);
  EXPECT_EQ(tensor.data_as<float>()[255], 1.0f);
  EXPECT_EQ(tensor.data_as<float>()[51], 0.2f);
}

TEST(ImageTensorTest, EverySixteenBitValueRoundTripsInFloat32) {
  Image image;
  image.width = 256;
  image.height = 256;
  image.channels = 1;
  image.bit_depth = 16;
  for (int v = 0; v < 65536; ++v) image.data16.push_back(static_cast<std::uint16_t>(v));
  const Tensor tensor = image_to_tensor(image, DataType::Float32);
  EXPECT_EQ(tensor.data_as<float>()[65535], 1.0f);
  expect_same_image(tensor_to_image(tensor.view(), 16), image);
}

TEST(ImageTensorTest, LayoutIsPlanarRgbWithAlphaLast) {
  const Image image = make_image8(2, 1, 4, {255, 0, 51, 255, 0, 102, 255, 255});
  const Tensor tensor = image_to_tensor(image, DataType::Float32, AlphaMode::Straight);
  EXPECT_EQ(tensor.sizes(), (Dims{1, 4, 1, 2}));
  const float* t = tensor.data_as<float>();
  EXPECT_EQ(std::vector<float>(t, t + 8), (std::vector<float>{1.0f, 0.0f, 0.0f, 0.4f, 0.2f, 1.0f, 1.0f, 1.0f}));
}

TEST(ImageTensorTest, PremultipliedAlphaScalesColour) {
  // (255, 255, 255, alpha 0), (200, 100, 50, 255), (255, 51, 0, 51).
  const Image image = make_image8(3, 1, 4, {255, 255, 255, 0, 200, 100, 50, 255, 255, 51, 0, 51});
  const Tensor tensor = image_to_tensor(image, DataType::Float32);
  const float* t = tensor.data_as<float>();
  auto at = [&](int c, int x) { return t[c * 3 + x]; };
  for (int c = 0; c < 4; ++c) EXPECT_EQ(at(c, 0), 0.0f) << c;  // colour under alpha 0 is 0
  EXPECT_EQ(at(0, 1), static_cast<float>(200.0 / 255.0));
  EXPECT_EQ(at(3, 1), 1.0f);
  EXPECT_EQ(at(0, 2), 0.2f);
  EXPECT_FLOAT_EQ(at(1, 2), 0.04f);
  EXPECT_EQ(at(3, 2), 0.2f);
  const Image back = tensor_to_image(tensor.view(), 8);
  EXPECT_EQ(back.data8, (Samples8{0, 0, 0, 0, 200, 100, 50, 255, 255, 51, 0, 51}));

  const Tensor straight = image_to_tensor(image, DataType::Float32, AlphaMode::Straight);
  EXPECT_EQ(straight.data_as<float>()[0], 1.0f);
  expect_same_image(tensor_to_image(straight.view(), 8, AlphaMode::Straight), image);
}

TEST(ImageTensorTest, PremultipliedRoundTripIsExactForEveryEightBitColourAndAlpha) {
  // Pixel (x, y): colour (x, 255 - x, x / 2), alpha y; gray + alpha likewise.
  for (const int channels : {2, 4}) {
    Image image;
    image.width = 256;
    image.height = 256;
    image.channels = channels;
    for (int a = 0; a < 256; ++a) {
      for (int c = 0; c < 256; ++c) {
        image.data8.push_back(static_cast<std::uint8_t>(c));
        if (channels == 4) {
          image.data8.push_back(static_cast<std::uint8_t>(255 - c));
          image.data8.push_back(static_cast<std::uint8_t>(c / 2));
        }
        image.data8.push_back(static_cast<std::uint8_t>(a));
      }
    }
    Image expected = image;
    for (std::size_t i = 0; i < expected.data8.size(); i += static_cast<std::size_t>(channels)) {
      if (expected.data8[i + static_cast<std::size_t>(channels) - 1] == 0) {
        for (int k = 0; k < channels - 1; ++k) expected.data8[i + static_cast<std::size_t>(k)] = 0;
      }
    }
    for (const DataType type : {DataType::Float32, DataType::Float16}) {
      SCOPED_TRACE(std::to_string(channels) + " channels, " + to_string(type));
      expect_same_image(tensor_to_image(image_to_tensor(image, type).view(), 8), expected);
    }
  }
}

TEST(ImageTensorTest, PremultipliedSixteenBitRoundTripInFloat32) {
  Image image;
  image.width = 4096;
  image.height = 1;
  image.channels = 2;
  image.bit_depth = 16;
  std::uint32_t state = 5;
  for (int i = 0; i < 4096; ++i) {
    state = state * 1664525u + 1013904223u;
    image.data16.push_back(static_cast<std::uint16_t>(state >> 16));
    state = state * 1664525u + 1013904223u;
    image.data16.push_back(static_cast<std::uint16_t>(i < 16 ? 65535 - i : 1 + (state >> 16) % 65535));
  }
  expect_same_image(tensor_to_image(image_to_tensor(image, DataType::Float32).view(), 16), image);
}

TEST(ImageTensorTest, ValuesAreRoundedAndSaturated) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> values = {nan, -0.5f, 0.0f, 0.5f, 0.004f, 0.999f, 1.0f, 7.0f, inf, -inf};
  const Image image = tensor_to_image(ConstTensorView(values.data(), DataType::Float32, {1, 1, 1, 10}), 8);
  EXPECT_EQ(image.data8, (Samples8{0, 0, 0, 128, 1, 255, 255, 255, 255, 0}));
  const Image image16 = tensor_to_image(ConstTensorView(values.data(), DataType::Float32, {1, 1, 1, 10}), 16);
  EXPECT_EQ(image16.data16, (Samples16{0, 0, 0, 32768, 262, 65469, 65535, 65535, 65535, 0}));

  // Premultiplied colour brighter than its alpha (ringing) saturates; NaN alpha makes the pixel 0.
  // Gray plane then alpha plane, 5 pixels: (0.9, 0.5), (0.2, 0), (0.1, 0.4), (0, 0.5), (NaN, NaN).
  const std::vector<float> planar = {0.9f, 0.2f, 0.1f, 0.0f, nan, 0.5f, 0.0f, 0.4f, 0.5f, nan};
  const Image premul = tensor_to_image(ConstTensorView(planar.data(), DataType::Float32, {1, 2, 1, 5}), 8);
  EXPECT_EQ(premul.data8, (Samples8{255, 128, 0, 0, 64, 102, 0, 128, 0, 0}));
}

TEST(ImageTensorTest, StridedViewsAreRead) {
  // An interleaved HWC float buffer viewed as NCHW: strides {H*W*C, 1, W*C, C}.
  const std::int64_t h = 3, w = 5, c = 3;
  std::vector<float> hwc(static_cast<std::size_t>(h * w * c));
  for (std::size_t i = 0; i < hwc.size(); ++i) hwc[i] = static_cast<float>(i) / 255.0f;
  const ConstTensorView view(hwc.data(), DataType::Float32, {1, c, h, w}, {h * w * c, 1, w * c, c});
  const Image image = tensor_to_image(view, 8);
  ASSERT_EQ(image.width, w);
  ASSERT_EQ(image.height, h);
  ASSERT_EQ(image.channels, 3);
  for (std::size_t i = 0; i < hwc.size(); ++i) EXPECT_EQ(image.data8[i], i) << i;

  // A float16 channel slice with padded rows: channels 1..2 of a 4-channel planar tensor, rows of pitch 8.
  std::vector<Float16> padded(static_cast<std::size_t>(4 * h * 8));
  for (std::size_t i = 0; i < padded.size(); ++i) padded[i] = Float16(static_cast<float>(i % 256) / 255.0f);
  const ConstTensorView slice(padded.data() + h * 8, DataType::Float16, {1, 2, h, w}, {4 * h * 8, h * 8, 8, 1});
  const Image gray_alpha = tensor_to_image(slice, 8, AlphaMode::Straight);
  ASSERT_EQ(gray_alpha.channels, 2);
  for (std::int64_t y = 0; y < h; ++y) {
    for (std::int64_t x = 0; x < w; ++x) {
      for (std::int64_t k = 0; k < 2; ++k) {
        EXPECT_EQ(gray_alpha.data8[static_cast<std::size_t>((y * w + x) * 2 + k)], ((1 + k) * h * 8 + y * 8 + x) % 256);
      }
    }
  }
  // A broadcast (zero-stride) view is a legal input too.
  const float half = 0.5f;
  const Image flat = tensor_to_image(ConstTensorView(&half, DataType::Float32, {1, 3, 2, 2}, {0, 0, 0, 0}), 16);
  EXPECT_EQ(flat.data16, Samples16(12, 32768));
}

TEST(ImageTensorTest, BadArgumentsAreRefused) {
  const std::vector<float> data(64, 0.0f);
  expect_error(
      [&] {
        tensor_to_image(ConstTensorView(data.data(), DataType::Float32, {1, 5, 2, 2}), 8);
      },
      ErrorCode::InvalidShape, {"tensor_to_image", "{1, 5, 2, 2}", "C in 1..4"});
  expect_error(
      [&] {
        tensor_to_image(ConstTensorView(data.data(), DataType::Float32, {2, 1, 2, 2}), 8);
      },
      ErrorCode::InvalidShape, {"{2, 1, 2, 2}"});
  expect_error(
      [&] {
        tensor_to_image(ConstTensorView(data.data(), DataType::Float32, {3, 2, 2}), 8);
      },
      ErrorCode::InvalidShape, {"{3, 2, 2}"});
  expect_error(
      [&] {
        tensor_to_image(ConstTensorView(data.data(), DataType::Float32, {1, 3, 0, 2}), 8);
      },
      ErrorCode::InvalidShape, {"H, W >= 1"});
  expect_error(
      [&] {
        tensor_to_image(ConstTensorView(data.data(), DataType::Float32, {1, 3, 2, 2}), 12);
      },
      ErrorCode::InvalidArgument, {"bit_depth 12", "8 or 16"});
  expect_error(
      [&] {
        tensor_to_image(ConstTensorView(data.data(), DataType::UInt32, {1, 3, 2, 2}), 8);
      },
      ErrorCode::InvalidDataType, {"uint32", "float32 or float16"});
  const Image image = make_image(2, 2, 3, 8);
  expect_error([&] { image_to_tensor(image, DataType::UInt32); }, ErrorCode::InvalidDataType, {"uint32"});
  Image bad = image;
  bad.channels = 5;
  expect_error([&] { image_to_tensor(bad, DataType::Float32); }, ErrorCode::InvalidArgument, {"5 channels"});
  bad = image;
  bad.data8.resize(3);
  expect_error([&] { image_to_tensor(bad, DataType::Float32); }, ErrorCode::InvalidArgument, {"12 samples", "3"});
}

TEST_F(ImageTest, TensorRoundTripThroughAFile) {
  const Image image = make_image(9, 6, 4, 16, 11);
  const Tensor tensor = image_to_tensor(image, DataType::Float32);
  write_image(path("t.png"), tensor_to_image(tensor.view(), 16));
  const Image back = read_image(path("t.png"));
  ASSERT_EQ(back.bit_depth, 16);
  // Premultiply-unpremultiply at 16 bits in float32 is exact except where alpha is 0.
  for (std::size_t i = 0; i < image.data16.size(); i += 4) {
    if (image.data16[i + 3] == 0) continue;
    for (std::size_t k = 0; k < 4; ++k) EXPECT_EQ(back.data16[i + k], image.data16[i + k]) << i;
  }
}

// PNG's side limit is 2^31 - 1, not libpng's default user limit of 1000000: a 1000001 x 2 image round-trips.
TEST(ImagePng, SidesOverAMillionPixels) {
  const std::string path = ::testing::TempDir() + "rsz_wide.png";
  io::Image wide;
  wide.width = 1000001;
  wide.height = 2;
  wide.channels = 1;
  wide.data8.resize(2000002);
  for (std::size_t i = 0; i < wide.data8.size(); ++i) wide.data8[i] = static_cast<std::uint8_t>(i * 13);
  io::write_image(path, wide);
  const io::Image back = io::read_image(path);
  EXPECT_EQ(back.width, 1000001);
  EXPECT_TRUE(back.data8 == wide.data8);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace rsz::io
