// Metadata travels from input to output: ICC colour profiles (PNG iCCP, JPEG APP2), EXIF (JPEG APP1, PNG eXIf;
// orientation reset to 1 once applied) and XMP, read and written by io and carried by the CLI unless --strip; a
// profile whose colour space does not fit the output's channels is left out.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <string>

#include "cli/cli_support.h"
#include "rsz/io/image.h"
#include "support/test_util.h"

namespace fs = std::filesystem;

namespace rsz {
namespace {

void put32(std::string& s, std::size_t at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) s[at + static_cast<std::size_t>(i)] = static_cast<char>((v >> (24 - 8 * i)) & 0xff);
}

// A small well-formed ICC v2 profile of `space` ("RGB " or "GRAY"): a header, a white point tag and a private tag
// of 400 pseudo-random bytes (libpng reads an iCCP chunk only when its compressed profile is longer than 92 bytes,
// as every real profile is).
std::string test_profile(const std::string& space) {
  constexpr std::uint32_t kSize = 128 + 4 + 2 * 12 + 20 + 400;
  std::string p(kSize, '\0');
  put32(p, 0, kSize);
  put32(p, 8, 0x02100000);             // version 2.1
  p.replace(12, 4, "mntr");            // display device
  p.replace(16, 4, space);             // data colour space
  p.replace(20, 4, "XYZ ");            // profile connection space
  p.replace(36, 4, "acsp");            // signature
  put32(p, 68, 0x0000F6D6);            // D50 illuminant X, Y, Z (s15Fixed16)
  put32(p, 72, 0x00010000);
  put32(p, 76, 0x0000D32D);
  p.replace(80, 4, "rsz ");            // creator
  put32(p, 128, 2);                    // tag count
  p.replace(132, 4, "wtpt");
  put32(p, 136, 156);
  put32(p, 140, 20);
  p.replace(144, 4, "rszX");
  put32(p, 148, 176);
  put32(p, 152, 400);
  p.replace(156, 4, "XYZ ");
  put32(p, 164, 0x0000F6D6);
  put32(p, 168, 0x00010000);
  put32(p, 172, 0x0000D32D);
  std::uint32_t state = 12345;
  for (std::size_t i = 176; i < kSize; ++i) {
    state = state * 1103515245u + 12345u;
    p[i] = static_cast<char>(state >> 24);
  }
  return p;
}

io::Image test_image(int channels) {
  io::Image image;
  image.width = 24;
  image.height = 16;
  image.channels = channels;
  for (int i = 0; i < 24 * 16 * channels; ++i) image.data8.push_back(static_cast<std::uint8_t>(i * 7));
  return image;
}

// The default PNG writer (libdeflate where the build has it) and the one of an explicit zlib level (libpng) keep the
// same metadata, at 8 and 16 bits: the profile, EXIF and the XMP iTXt chunk; a profile whose stated length is wrong
// is left out by both, as libpng leaves it out. libpng reads every chunk back and checks their CRCs.
TEST(IccProfile, BothPngWritersKeepTheSameMetadata) {
  test::ScratchDir dir("icc-png-writers");
  const std::string profile = test_profile("RGB ");
  std::string broken = profile;
  put32(broken, 0, static_cast<std::uint32_t>(profile.size() - 4));
  for (const int bit_depth : {8, 16}) {
    for (const int compression : {-1, 6}) {
      for (const std::string& icc : {profile, broken}) {
        io::Image image = test_image(3);
        if (bit_depth == 16) {
          image.bit_depth = 16;
          for (const std::uint8_t v : image.data8) image.data16.push_back(static_cast<std::uint16_t>(v * 257 + 3));
          image.data8.clear();
        }
        image.icc_profile = icc;
        image.exif = std::string("MM\0*\0\0\0\x08\0\0", 10);
        image.xmp = "<x:xmpmeta xmlns:x='adobe:ns:meta/'/>";
        io::ImageWriteOptions options;
        options.png_compression = compression;
        const std::string file = dir / ("m" + std::to_string(bit_depth) + "_" + std::to_string(compression) + ".png");
        io::write_image(file, image, options);
        SCOPED_TRACE(file + (icc == profile ? "" : ", broken profile"));
        const io::Image back = io::read_image(file);
        EXPECT_EQ(back.data8, image.data8);
        EXPECT_EQ(back.data16, image.data16);
        EXPECT_EQ(back.icc_profile, icc == profile ? profile : std::string());
        EXPECT_EQ(back.exif, image.exif);
        EXPECT_EQ(back.xmp, image.xmp);  // read back from the iTXt chunk
        const std::string bytes = test::read_file(file);
        EXPECT_NE(bytes.find(std::string("iTXtXML:com.adobe.xmp\0\0\0\0\0", 26) + image.xmp), std::string::npos);
      }
    }
  }
}

TEST(IccProfile, PngAndJpegKeepTheProfileThroughIo) {
  test::ScratchDir dir("icc-io");
  io::Image image = test_image(3);
  image.icc_profile = test_profile("RGB ");
  io::write_image(dir / "p.png", image);
  io::write_image(dir / "p.jpg", image);
  EXPECT_EQ(io::read_image(dir / "p.png").icc_profile, image.icc_profile);
  EXPECT_EQ(io::read_image(dir / "p.jpg").icc_profile, image.icc_profile);
  // An RGB profile does not describe gray pixels: left out.
  io::Image gray = test_image(1);
  gray.icc_profile = image.icc_profile;
  io::write_image(dir / "g.png", gray);
  EXPECT_EQ(io::read_image(dir / "g.png").icc_profile, "");
  gray.icc_profile = test_profile("GRAY");
  io::write_image(dir / "g.jpg", gray);
  EXPECT_EQ(io::read_image(dir / "g.jpg").icc_profile, gray.icc_profile);
}

TEST(IccProfile, TheCliCarriesItUnlessStripped) {
  test::ScratchDir dir("icc-cli");
  io::Image image = test_image(3);
  image.icc_profile = test_profile("RGB ");
  io::write_image(dir / "in.png", image);
  for (const char* out : {"out.png", "out.jpg"}) {
    const auto r = test::run_rsz(dir, std::string("resample -i in.png -o ") + out + " --scale 0.5 -q");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(io::read_image(dir / out).icc_profile, image.icc_profile) << out;
  }
  auto r = test::run_rsz(dir, "resample -i in.png -o stripped.png --scale 0.5 -q --strip");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(io::read_image(dir / "stripped.png").icc_profile, "");
  r = test::run_rsz(dir, "resample -i in.png -o gray.png --scale 0.5 -q --grayscale");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(io::read_image(dir / "gray.png").icc_profile, "");  // an RGB profile would be wrong on gray pixels
}

// The EXIF orientation of a TIFF structure (as io keeps it), 0 when there is none.
int orientation_of(const std::string& tiff) {
  const bool little = tiff.size() >= 2 && tiff[0] == 'I';
  for (std::size_t i = 8; i + 10 <= tiff.size(); i += 2) {
    const auto b = [&](std::size_t k) { return static_cast<unsigned>(static_cast<unsigned char>(tiff[k])); };
    const unsigned tag = little ? b(i) | b(i + 1) << 8 : b(i) << 8 | b(i + 1);
    if (tag == 0x0112) return static_cast<int>(little ? b(i + 8) | b(i + 9) << 8 : b(i + 8) << 8 | b(i + 9));
  }
  return 0;
}

TEST(ExifAndXmp, TravelToJpegAndPngOutputsWithTheOrientationReset) {
  test::ScratchDir dir("exif-xmp");
  io::write_image(dir / "plain.jpg", test_image(3));
  // Orientation 6 (the pixels are turned on reading) and an XMP packet after it.
  const std::string xmp = "<x:xmpmeta xmlns:x='adobe:ns:meta/'>rsz test</x:xmpmeta>";
  const std::string xmp_segment = std::string("http://ns.adobe.com/xap/1.0/") + '\0' + xmp;
  std::string app1 = "\xFF\xE1";
  app1 += static_cast<char>((xmp_segment.size() + 2) >> 8);
  app1 += static_cast<char>((xmp_segment.size() + 2) & 0xff);
  app1 += xmp_segment;
  std::string jpeg = test::with_exif_orientation(test::read_file(dir / "plain.jpg"), 6);
  jpeg.insert(2, app1);
  test::write_file(dir / "in.jpg", jpeg);
  const io::Image in = io::read_image(dir / "in.jpg");
  EXPECT_EQ(in.width, 16);  // turned upright
  EXPECT_EQ(orientation_of(in.exif), 1);
  EXPECT_EQ(in.xmp, xmp);
  for (const char* out : {"out.jpg", "out.png"}) {
    const auto r = test::run_rsz(dir, std::string("resample -i in.jpg -o ") + out + " --scale 2 -q");
    ASSERT_EQ(r.status, 0) << r.err;
    io::ImageReadOptions as_stored;
    as_stored.apply_exif_orientation = false;
    const io::Image written = io::read_image(dir / out, as_stored);
    EXPECT_EQ(written.width, 32) << out;  // upright pixels, and a tag that says so
    EXPECT_EQ(orientation_of(written.exif), 1) << out;
    EXPECT_NE(written.exif.find("rsz"), std::string::npos) << out;  // the Make tag came along
    EXPECT_NE(test::read_file(dir / out).find("rsz test</x:xmpmeta>"), std::string::npos) << out;
    EXPECT_EQ(written.xmp, xmp) << out;
  }
  // A two-step chain through PNG keeps the XMP packet (the PNG's iTXt chunk is read like its iCCP and eXIf).
  auto chain = test::run_rsz(dir, "resample -i out.png -o chained.jpg --scale 0.5 -q");
  ASSERT_EQ(chain.status, 0) << chain.err;
  EXPECT_EQ(io::read_image(dir / "chained.jpg").xmp, xmp);
  // --no-exif keeps the stored pixels, so the tag stays 6; --strip drops everything.
  auto r = test::run_rsz(dir, "resample -i in.jpg -o stored.jpg --scale 1 -q --no-exif");
  ASSERT_EQ(r.status, 0) << r.err;
  io::ImageReadOptions as_stored;
  as_stored.apply_exif_orientation = false;
  EXPECT_EQ(orientation_of(io::read_image(dir / "stored.jpg", as_stored).exif), 6);
  r = test::run_rsz(dir, "resample -i in.jpg -o bare.jpg --scale 1 -q --strip");
  ASSERT_EQ(r.status, 0) << r.err;
  const io::Image bare = io::read_image(dir / "bare.jpg");
  EXPECT_EQ(bare.exif, "");
  EXPECT_EQ(bare.xmp, "");
}

// WebP (ICCP, EXIF and XMP chunks) and TIFF (ICC profile and XMP tags) keep their metadata through io, written and
// read back through the codec module; the CLI carries it from PNG to WebP and TIFF and back, unless --strip.
TEST(WebpAndTiffMetadata, IccExifAndXmpRoundTrip) {
  test::ScratchDir dir("webp-tiff-metadata");
  io::Image image = test_image(3);
  image.icc_profile = test_profile("RGB ");
  image.xmp = "<x:xmpmeta xmlns:x='adobe:ns:meta/'>rsz webp</x:xmpmeta>";
  io::write_image(dir / "rgb.jpg", test_image(3));
  const std::string exif = test::with_exif_orientation(test::read_file(dir / "rgb.jpg"), 3);
  test::write_file(dir / "o3.jpg", exif);
  io::ImageReadOptions as_stored;
  as_stored.apply_exif_orientation = false;
  image.exif = io::read_image(dir / "o3.jpg", as_stored).exif;  // a real EXIF block, orientation 3
  ASSERT_EQ(orientation_of(image.exif), 3);
  io::ImageWriteOptions lossless;
  lossless.lossless = true;
  for (const char* name : {"m.webp", "m.tiff"}) {
    io::write_image(dir / name, image, lossless);
    const io::Image back = io::read_image(dir / name);
    EXPECT_EQ(back.icc_profile, image.icc_profile) << name;
    EXPECT_EQ(back.xmp, image.xmp) << name;
    EXPECT_EQ(back.data8, image.data8) << name;  // lossless WebP, plain TIFF
    // WebP holds EXIF as a blob, kept as it is (its orientation is not applied: WebP pixels are read as stored);
    // TIFF's EXIF is a directory of its own, which rsz does not write.
    EXPECT_EQ(back.exif, std::string(name) == "m.webp" ? image.exif : "") << name;
  }
  // A gray profile does not fit a WebP (written as RGB): left out.
  io::Image gray = test_image(1);
  gray.icc_profile = test_profile("GRAY");
  io::write_image(dir / "g.webp", gray);
  EXPECT_EQ(io::read_image(dir / "g.webp").icc_profile, "");
  io::write_image(dir / "g.tiff", gray);
  EXPECT_EQ(io::read_image(dir / "g.tiff").icc_profile, gray.icc_profile);

  // The CLI: PNG -> WebP / TIFF -> PNG keeps the profile; --strip drops it.
  io::Image png = test_image(3);
  png.icc_profile = test_profile("RGB ");
  io::write_image(dir / "in.png", png);
  for (const char* out : {"out.webp", "out.tiff"}) {
    auto r = test::run_rsz(dir, std::string("resample -i in.png -o ") + out + " --scale 0.5 -q");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(io::read_image(dir / out).icc_profile, png.icc_profile) << out;
    r = test::run_rsz(dir, std::string("resample -i ") + out + " -o back_" + out + ".png --scale 2 -q");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(io::read_image(dir / (std::string("back_") + out + ".png")).icc_profile, png.icc_profile) << out;
    r = test::run_rsz(dir, std::string("resample -i in.png -o stripped_") + out + " --scale 0.5 -q --strip");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(io::read_image(dir / (std::string("stripped_") + out)).icc_profile, "") << out;
  }
}

}  // namespace
}  // namespace rsz
