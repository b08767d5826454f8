// Colour (rsz/io/colour.h and --colorspace / --strip): an Adobe RGB (1998) photo, its profile made here with lcms2,
// converted to sRGB by the command line gives the values lcms2 itself computes for the same pixels (relative
// colorimetric, float), embeds the sRGB profile (none under --strip, which converts too), and is left as it is by
// default; sRGB profiles (lcms2's, and one built from sRGB's published parameters) are recognised as such.
#include <lcms2.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "cli/cli_support.h"
#include "rsz/io/colour.h"
#include "rsz/io/image.h"
#include "support/test_util.h"

namespace rsz {
namespace {

std::string saved(cmsHPROFILE profile) {
  cmsUInt32Number size = 0;
  cmsSaveProfileToMem(profile, nullptr, &size);
  std::string bytes(size, '\0');
  cmsSaveProfileToMem(profile, bytes.data(), &size);
  cmsCloseProfile(profile);
  return bytes;
}

// RGB primaries on a D65 white with one tone curve.
std::string rgb_profile(double rx, double ry, double gx, double gy, double bx, double by, cmsToneCurve* curve) {
  const cmsCIExyY white = {0.3127, 0.3290, 1.0};  // D65
  const cmsCIExyYTRIPLE primaries = {{rx, ry, 1.0}, {gx, gy, 1.0}, {bx, by, 1.0}};
  cmsToneCurve* curves[3] = {curve, curve, curve};
  const std::string bytes = saved(cmsCreateRGBProfile(&white, &primaries, curves));
  cmsFreeToneCurve(curve);
  return bytes;
}

std::string adobe_rgb() { return rgb_profile(0.64, 0.33, 0.21, 0.71, 0.15, 0.06, cmsBuildGamma(nullptr, 563.0 / 256.0)); }

std::string published_srgb() {
  const cmsFloat64Number params[] = {2.4, 1.0 / 1.055, 0.055 / 1.055, 1.0 / 12.92, 0.04045};
  return rgb_profile(0.64, 0.33, 0.30, 0.60, 0.15, 0.06, cmsBuildParametricToneCurve(nullptr, 4, params));
}

// A 40 x 30 RGB image whose colours sweep the cube (saturated ones included).
io::Image photo() {
  io::Image image;
  image.width = 40;
  image.height = 30;
  image.channels = 3;
  for (int y = 0; y < 30; ++y) {
    for (int x = 0; x < 40; ++x) {
      image.data8.push_back(static_cast<std::uint8_t>(x * 255 / 39));
      image.data8.push_back(static_cast<std::uint8_t>(y * 255 / 29));
      image.data8.push_back(static_cast<std::uint8_t>((x * 7 + y * 11) % 256));
    }
  }
  return image;
}

std::vector<std::uint8_t> samples(const io::Image& image) { return {image.data8.begin(), image.data8.end()}; }

// What lcms2 makes of the image's samples in float, rounded as rsz writes samples.
std::vector<std::uint8_t> expected_srgb(const io::Image& image, const std::string& icc) {
  cmsHPROFILE in = cmsOpenProfileFromMem(icc.data(), static_cast<cmsUInt32Number>(icc.size()));
  cmsHPROFILE out = cmsCreate_sRGBProfile();
  cmsHTRANSFORM t = cmsCreateTransform(in, TYPE_RGB_FLT, out, TYPE_RGB_FLT, INTENT_RELATIVE_COLORIMETRIC, 0);
  std::vector<float> values;
  for (const std::uint8_t v : image.data8) values.push_back(static_cast<float>(v) / 255.0f);
  cmsDoTransform(t, values.data(), values.data(), static_cast<cmsUInt32Number>(values.size() / 3));
  cmsDeleteTransform(t);
  cmsCloseProfile(in);
  cmsCloseProfile(out);
  std::vector<std::uint8_t> samples;
  for (const float v : values) {
    const double x = static_cast<double>(v) * 255.0;
    samples.push_back(!(v > 0.0f) ? 0 : x >= 255.0 ? 255 : static_cast<std::uint8_t>(std::round(x)));
  }
  return samples;
}

TEST(Colour, SrgbProfilesAreKnownAndOthersAreNot) {
  EXPECT_TRUE(io::is_srgb_profile(""));
  EXPECT_TRUE(io::is_srgb_profile(io::srgb_profile()));
  EXPECT_TRUE(io::is_srgb_profile(published_srgb()));
  // sRGB IEC61966-2.1 as cameras and Photoshop embed it (samples/photos/chelsea.png carries it).
  EXPECT_TRUE(io::is_srgb_profile(io::read_image(std::string(RSZ_SOURCE_DIR) + "/samples/photos/chelsea.png").icc_profile));
  EXPECT_TRUE(io::is_srgb_profile(io::srgb_gray_profile()));
  EXPECT_FALSE(io::is_srgb_profile(adobe_rgb()));
  EXPECT_FALSE(io::is_srgb_profile("not a profile at all"));
}

TEST(Colour, AnAdobeRgbPhotoConvertedToSrgbHasLcmsValues) {
  test::ScratchDir dir("colour");
  io::Image image = photo();
  image.icc_profile = adobe_rgb();
  io::write_image(dir / "adobe.png", image);
  const std::vector<std::uint8_t> expected = expected_srgb(image, image.icc_profile);
  ASSERT_NE(expected, samples(image));  // the conversion moves colours
  auto r = test::run_rsz(dir, "resample -i adobe.png -o srgb.png --scale 1 --colorspace srgb -q");
  ASSERT_EQ(r.status, 0) << r.err;
  const io::Image srgb = io::read_image(dir / "srgb.png");
  EXPECT_EQ(samples(srgb), expected);
  EXPECT_EQ(srgb.icc_profile, io::srgb_profile());
  // --strip converts too (the look is kept), and embeds nothing.
  r = test::run_rsz(dir, "resample -i adobe.png -o stripped.jpg --scale 1 --strip --quality 100 -q");
  ASSERT_EQ(r.status, 0) << r.err;
  r = test::run_rsz(dir, "resample -i adobe.png -o stripped.png --scale 1 --strip -q");
  ASSERT_EQ(r.status, 0) << r.err;
  const io::Image stripped = io::read_image(dir / "stripped.png");
  EXPECT_EQ(samples(stripped), expected);
  EXPECT_EQ(stripped.icc_profile, "");
  // By default the pixels and the profile are the input's.
  r = test::run_rsz(dir, "resample -i adobe.png -o kept.png --scale 1 -q");
  ASSERT_EQ(r.status, 0) << r.err;
  const io::Image kept = io::read_image(dir / "kept.png");
  EXPECT_EQ(kept.data8, image.data8);
  EXPECT_EQ(kept.icc_profile, image.icc_profile);
  // An sRGB photo is not touched by --colorspace srgb.
  io::Image plain = photo();
  plain.icc_profile = published_srgb();
  io::write_image(dir / "srgb_in.png", plain);
  r = test::run_rsz(dir, "resample -i srgb_in.png -o srgb_out.png --scale 1 --colorspace srgb -q");
  ASSERT_EQ(r.status, 0) << r.err;
  const io::Image same = io::read_image(dir / "srgb_out.png");
  EXPECT_EQ(same.data8, plain.data8);
  EXPECT_EQ(same.icc_profile, plain.icc_profile);
  // A bad value names the choices.
  r = test::run_rsz(dir, "resample -i adobe.png -o x.png --scale 1 --colorspace p3");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("keep"), std::string::npos) << r.err;
}

// A profile lcms2 cannot use (a header without tags): --colorspace srgb fails that input, saying why; --strip alone
// strips it as before.
TEST(Colour, AProfileThatCannotBeConvertedFailsColorspaceSrgb) {
  test::ScratchDir dir("colour-bad");
  io::Image image = photo();
  std::string icc(132, '\0');
  icc[3] = static_cast<char>(132);
  icc.replace(12, 4, "mntr");
  icc.replace(16, 4, "RGB ");
  icc.replace(20, 4, "XYZ ");
  icc.replace(36, 4, "acsp");
  image.icc_profile = icc;
  io::write_image(dir / "bad.jpg", image);
  ASSERT_EQ(io::read_image(dir / "bad.jpg").icc_profile, icc);
  auto r = test::run_rsz(dir, "resample -i bad.jpg -o out.png --scale 1 --colorspace srgb");
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("rsz: bad.jpg: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("sRGB"), std::string::npos) << r.err;
  r = test::run_rsz(dir, "resample -i bad.jpg -o stripped.png --scale 1 --strip -q");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(io::read_image(dir / "stripped.png").icc_profile, "");
}

TEST(Colour, ThumbnailsWithAlphaConvertTheColourAndKeepTheAlpha) {
  test::ScratchDir dir("colour-alpha");
  io::Image image = photo();
  image.channels = 4;
  std::vector<std::uint8_t> rgba;
  for (std::size_t i = 0; i < image.data8.size(); i += 3) {
    rgba.insert(rgba.end(), {image.data8[i], image.data8[i + 1], image.data8[i + 2], 255});
  }
  image.data8.assign(rgba.begin(), rgba.end());
  image.icc_profile = adobe_rgb();
  io::write_image(dir / "a.png", image);
  const auto r = test::run_rsz(dir, "resample -i a.png -o b.png --scale 1 --colorspace srgb -q");
  ASSERT_EQ(r.status, 0) << r.err;
  const io::Image out = io::read_image(dir / "b.png");
  ASSERT_EQ(out.channels, 4);
  io::Image rgb = photo();
  const std::vector<std::uint8_t> expected = expected_srgb(rgb, adobe_rgb());
  for (std::size_t p = 0; p < expected.size() / 3; ++p) {
    EXPECT_EQ(out.data8[4 * p + 3], 255);
    for (int k = 0; k < 3; ++k) ASSERT_EQ(out.data8[4 * p + k], expected[3 * p + k]) << p;
  }
}

}  // namespace
}  // namespace rsz
