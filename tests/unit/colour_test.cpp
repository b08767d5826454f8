// Colour (rsz/io/colour.h and --colorspace / --strip): an Adobe RGB (1998) photo, its profile made here with lcms2,
// converted to sRGB by the command line gives the values lcms2 itself computes for the same pixels (relative
// colorimetric, float), embeds the sRGB profile (none under --strip, which converts too), and is left as it is by
// default; sRGB profiles (lcms2's, and one built from sRGB's published parameters) are recognised as such.
#include <dlfcn.h>
#include <lcms2.h>
#include <libheif/heif.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
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
  EXPECT_EQ(srgb.icc_profile, io::srgb_profile());  // the same bytes in every process (no time stamp)
  EXPECT_EQ(io::srgb_profile().substr(24, 12), std::string("\x07\xD0\0\x01\0\x01\0\0\0\0\0\0", 12));
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

// An AVIF whose colour is stated by nclx code points (Display P3 primaries, the sRGB curve), made with libheif: rsz
// reads it with an ICC profile of that colour, and --colorspace srgb gives the values of the P3 -> sRGB matrix (both
// D65; computed here from the primaries, within a level). Without the conversion, the pixels are libheif's.
TEST(Colour, AnAvifInDisplayP3StatedByNclxIsConvertedToSrgb) {
  test::ScratchDir dir("colour-nclx");
  void* lib = ::dlopen(RSZ_LIBHEIF_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) GTEST_SKIP() << "libheif cannot be loaded here: " << ::dlerror();
  const auto fn = [lib](const char* name) { return ::dlsym(lib, name); };
#define RSZ_HEIF(name) reinterpret_cast<decltype(&name)>(fn(#name))
  const auto context_alloc = RSZ_HEIF(heif_context_alloc);
  const auto encoder_for = RSZ_HEIF(heif_context_get_encoder_for_format);
  const auto set_lossless = RSZ_HEIF(heif_encoder_set_lossless);
  const auto set_string = RSZ_HEIF(heif_encoder_set_parameter_string);
  const auto image_create = RSZ_HEIF(heif_image_create);
  const auto add_plane = RSZ_HEIF(heif_image_add_plane);
  const auto get_plane = RSZ_HEIF(heif_image_get_plane);
  const auto nclx_alloc = RSZ_HEIF(heif_nclx_color_profile_alloc);
  const auto nclx_free = RSZ_HEIF(heif_nclx_color_profile_free);
  const auto set_nclx = RSZ_HEIF(heif_image_set_nclx_color_profile);
  const auto options_alloc = RSZ_HEIF(heif_encoding_options_alloc);
  const auto options_free = RSZ_HEIF(heif_encoding_options_free);
  const auto encode_image = RSZ_HEIF(heif_context_encode_image);
  const auto write_file = RSZ_HEIF(heif_context_write_to_file);
  const auto image_release = RSZ_HEIF(heif_image_release);
  const auto encoder_release = RSZ_HEIF(heif_encoder_release);
  const auto context_free = RSZ_HEIF(heif_context_free);
  const auto init = RSZ_HEIF(heif_init);
#undef RSZ_HEIF
  ASSERT_EQ(init(nullptr).code, heif_error_Ok);  // its plugins, as rsz starts them
  const int w = 8, h = 4;
  heif_context* context = context_alloc();
  heif_encoder* encoder = nullptr;
  ASSERT_EQ(encoder_for(context, heif_compression_AV1, &encoder).code, heif_error_Ok);
  set_lossless(encoder, 1);
  set_string(encoder, "chroma", "444");
  heif_image* image = nullptr;
  ASSERT_EQ(image_create(w, h, heif_colorspace_RGB, heif_chroma_interleaved_RGB, &image).code, heif_error_Ok);
  add_plane(image, heif_channel_interleaved, w, h, 8);
  int stride = 0;
  std::uint8_t* rows = get_plane(image, heif_channel_interleaved, &stride);
  const std::uint8_t colours[4][3] = {{128, 64, 32}, {40, 200, 90}, {230, 230, 230}, {10, 20, 250}};
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) std::memcpy(rows + y * stride + 3 * x, colours[(x + y) % 4], 3);
  }
  heif_color_profile_nclx* nclx = nclx_alloc();
  nclx->color_primaries = heif_color_primaries_SMPTE_EG_432_1;
  nclx->transfer_characteristics = heif_transfer_characteristic_IEC_61966_2_1;
  nclx->matrix_coefficients = heif_matrix_coefficients_RGB_GBR;
  nclx->full_range_flag = 1;
  set_nclx(image, nclx);
  heif_encoding_options* options = options_alloc();
  options->output_nclx_profile = nclx;
  ASSERT_EQ(encode_image(context, image, encoder, options, nullptr).code, heif_error_Ok);
  ASSERT_EQ(write_file(context, (dir / "p3.avif").c_str()).code, heif_error_Ok);
  options_free(options);
  nclx_free(nclx);
  image_release(image);
  encoder_release(encoder);
  context_free(context);

  const io::Image read = io::read_image(dir / "p3.avif");
  ASSERT_FALSE(read.icc_profile.empty());  // the colour travels with the pixels
  EXPECT_FALSE(io::is_srgb_profile(read.icc_profile));
  auto r = test::run_rsz(dir, "resample -i p3.avif -o srgb.png --scale 1 --colorspace srgb -q");
  ASSERT_EQ(r.status, 0) << r.err;
  const io::Image srgb = io::read_image(dir / "srgb.png");
  // RGB -> XYZ of a set of primaries with a D65 white, and the sRGB curve both ways.
  const auto to_xyz = [](const double (&p)[3][2]) {
    const double white[3] = {0.3127 / 0.3290, 1.0, (1 - 0.3127 - 0.3290) / 0.3290};
    double m[3][3];
    for (int c = 0; c < 3; ++c) {
      m[0][c] = p[c][0] / p[c][1];
      m[1][c] = 1.0;
      m[2][c] = (1 - p[c][0] - p[c][1]) / p[c][1];
    }
    const double det = m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) -
                       m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
                       m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
    double s[3];
    for (int c = 0; c < 3; ++c) {  // Cramer's rule: m * s = white
      double t[3][3];
      for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 3; ++j) t[i][j] = j == c ? white[i] : m[i][j];
      }
      s[c] = (t[0][0] * (t[1][1] * t[2][2] - t[1][2] * t[2][1]) - t[0][1] * (t[1][0] * t[2][2] - t[1][2] * t[2][0]) +
              t[0][2] * (t[1][0] * t[2][1] - t[1][1] * t[2][0])) / det;
    }
    std::vector<double> out(9);
    for (int i = 0; i < 3; ++i) {
      for (int c = 0; c < 3; ++c) out[static_cast<std::size_t>(i * 3 + c)] = m[i][c] * s[c];
    }
    return out;
  };
  const double p3[3][2] = {{0.680, 0.320}, {0.265, 0.690}, {0.150, 0.060}};
  const double bt709[3][2] = {{0.64, 0.33}, {0.30, 0.60}, {0.15, 0.06}};
  const std::vector<double> from = to_xyz(p3);
  const std::vector<double> to = to_xyz(bt709);
  const auto decode = [](double v) { v /= 255; return v <= 0.04045 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4); };
  const auto encode = [](double v) {
    v = std::clamp(v, 0.0, 1.0);
    return 255 * (v <= 0.0031308 ? v * 12.92 : 1.055 * std::pow(v, 1 / 2.4) - 0.055);
  };
  for (std::size_t px = 0; px < static_cast<std::size_t>(w * h); ++px) {
    double xyz[3] = {0, 0, 0};
    for (int i = 0; i < 3; ++i) {
      for (int c = 0; c < 3; ++c) xyz[i] += from[static_cast<std::size_t>(i * 3 + c)] * decode(read.data8[px * 3 + c]);
    }
    // Solve to * rgb = xyz (Cramer again, small and exact enough).
    double m[3][3];
    for (int i = 0; i < 3; ++i) {
      for (int c = 0; c < 3; ++c) m[i][c] = to[static_cast<std::size_t>(i * 3 + c)];
    }
    const auto det3 = [](const double (&a)[3][3]) {
      return a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1]) - a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0]) +
             a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0]);
    };
    const double det = det3(m);
    for (int c = 0; c < 3; ++c) {
      double t[3][3];
      for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 3; ++j) t[i][j] = j == c ? xyz[i] : m[i][j];
      }
      const double expected = encode(det3(t) / det);
      EXPECT_NEAR(srgb.data8[px * 3 + c], expected, 1.5) << "pixel " << px << " channel " << c;
    }
  }
}

}  // namespace
}  // namespace rsz
