// Colour: embedded ICC profiles converted to sRGB with lcms2 (--colorspace srgb, and --strip of a photo whose profile
// is not sRGB). lcms2 is loaded with dlopen the first time a profile is looked at, so a program that converts no
// colour never loads it.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#pragma GCC visibility push(default)

namespace rsz::io {

// Whether `icc` describes sRGB closely enough that converting from it changes nothing an output could show (a grid of
// colours moves by less than two levels of 8 bits); true for "" (no profile: sRGB is assumed). A profile lcms2
// cannot read is not sRGB. Throws rsz::Error (Io) when lcms2 cannot be loaded. Answers are kept per profile.
bool is_srgb_profile(const std::string& icc);

// The colour channels of a profile's colour space: 3 (RGB), 1 (gray), 0 for another (CMYK, Lab), -1 for a profile
// lcms2 cannot read. Throws rsz::Error (Io) when lcms2 cannot be loaded.
int profile_channels(const std::string& icc);

// The bytes of the sRGB profile (lcms2's) that converted RGB outputs embed, and of its gray twin (D50 white, the sRGB
// tone curve) for gray ones.
const std::string& srgb_profile();
const std::string& srgb_gray_profile();

// A conversion of straight colour values in [0, 1] from an ICC profile to sRGB (relative colorimetric intent, as
// transicc -t1 and vips compute it): RGB profiles for 3 or 4 channels, gray ones for 1 or 2 (to sRGB's tone curve);
// alpha, the last channel, is left as it is. Usable from several threads at once.
class SrgbTransform {
 public:
  // Throws rsz::Error (Format) naming `what` for a profile lcms2 cannot read or whose colour space does not fit the
  // channels, and (Io) when lcms2 cannot be loaded.
  SrgbTransform(const std::string& icc, int channels, const std::string& what);
  ~SrgbTransform();
  SrgbTransform(const SrgbTransform&) = delete;
  SrgbTransform& operator=(const SrgbTransform&) = delete;
  // Converts `count` pixels of interleaved float values (this transform's channels, alpha last) in place.
  void apply(float* pixels, std::size_t count) const;
  int channels() const { return channels_; }
  // The profile an output of these pixels embeds: srgb_profile() or srgb_gray_profile().
  const std::string& profile() const;

 private:
  void* transform_ = nullptr;
  int channels_ = 3;
};

// Colour stated by code points (ITU-T H.273, an AVIF's or HEIC's nclx box) instead of an ICC profile.
struct NclxColour {
  int primaries = 1;  // 1: BT.709 (sRGB's), 9: BT.2020, 11: DCI-P3, 12: Display P3, ...; 2: unspecified (BT.709)
  int transfer = 13;  // 13: the sRGB curve, 1/6/14/15: BT.709's, 4: gamma 2.2, 5: gamma 2.8, 8: linear, 16: PQ, 18: HLG
};
// The ICC profile (lcms2's) of such colour, so that it travels with the pixels and --colorspace srgb converts it: ""
// for sRGB itself (BT.709 primaries, or unspecified ones, with the sRGB curve or an unspecified one), and for code
// points no SDR ICC profile states (PQ, HLG, unknown primaries) or where lcms2 cannot be loaded.
std::string icc_of_nclx(const NclxColour& nclx);

}  // namespace rsz::io

#pragma GCC visibility pop
