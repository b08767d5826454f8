// rsz/io/colour.h: lcms2, loaded with dlopen on first use, converts embedded profiles to sRGB.
#include "rsz/io/colour.h"

#include <lcms2.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "file_util.h"
#include "rsz/error.h"

namespace rsz::io {
namespace {

using detail::SharedLibrary;

struct Lcms {
  std::string error;  // why lcms2 cannot be used; "" when it can
  decltype(&cmsOpenProfileFromMem) open = nullptr;
  decltype(&cmsCloseProfile) close = nullptr;
  decltype(&cmsCreate_sRGBProfile) srgb = nullptr;
  decltype(&cmsCreateGrayProfile) gray = nullptr;
  decltype(&cmsCreateRGBProfile) rgb = nullptr;
  decltype(&cmsBuildParametricToneCurve) curve = nullptr;
  decltype(&cmsFreeToneCurve) free_curve = nullptr;
  decltype(&cmsD50_xyY) d50 = nullptr;
  decltype(&cmsSaveProfileToMem) save = nullptr;
  decltype(&cmsGetColorSpace) space = nullptr;
  decltype(&cmsCreateTransform) create = nullptr;
  decltype(&cmsDeleteTransform) destroy = nullptr;
  decltype(&cmsDoTransform) run = nullptr;
};

const Lcms& lcms() {
  static const Lcms loaded = [] {
    Lcms l;
    SharedLibrary library;
    if (!library.open(RSZ_LCMS2_SONAME)) {
      l.error = std::string("lcms2 (") + RSZ_LCMS2_SONAME + ") cannot be loaded" +
                (library.why().empty() ? "" : ": " + library.why()) + "; install it (Debian: liblcms2-2)";
      return l;
    }
    const bool all = library.resolve("cmsOpenProfileFromMem", l.open) && library.resolve("cmsCloseProfile", l.close) &&
                     library.resolve("cmsCreate_sRGBProfile", l.srgb) &&
                     library.resolve("cmsCreateGrayProfile", l.gray) && library.resolve("cmsCreateRGBProfile", l.rgb) &&
                     library.resolve("cmsBuildParametricToneCurve", l.curve) &&
                     library.resolve("cmsFreeToneCurve", l.free_curve) && library.resolve("cmsD50_xyY", l.d50) &&
                     library.resolve("cmsSaveProfileToMem", l.save) && library.resolve("cmsGetColorSpace", l.space) &&
                     library.resolve("cmsCreateTransform", l.create) &&
                     library.resolve("cmsDeleteTransform", l.destroy) && library.resolve("cmsDoTransform", l.run);
    if (!all) {
      l.error = std::string("lcms2 (") + RSZ_LCMS2_SONAME + ") lacks a function rsz needs";
      library.close();
    }
    return l;
  }();
  return loaded;
}

const Lcms& need_lcms(const std::string& what) {
  const Lcms& l = lcms();
  if (!l.error.empty()) throw Error(ErrorCode::Io, what + ": cannot convert its colours: " + l.error);
  return l;
}

// A profile handle closed when it goes.
struct Profile {
  const Lcms& l;
  cmsHPROFILE handle;
  ~Profile() {
    if (handle != nullptr) l.close(handle);
  }
};

// sRGB's gray twin: D50 white, the sRGB tone curve (IEC 61966-2-1: type 4, gamma 2.4 with its linear toe).
cmsHPROFILE make_gray(const Lcms& l) {
  const cmsFloat64Number params[] = {2.4, 1.0 / 1.055, 0.055 / 1.055, 1.0 / 12.92, 0.04045};
  cmsToneCurve* curve = l.curve(nullptr, 4, params);
  if (curve == nullptr) return nullptr;
  cmsHPROFILE gray = l.gray(l.d50(), curve);
  l.free_curve(curve);
  return gray;
}

// A made profile's bytes, the same in every process: lcms2 stamps a profile with the time it was made (the header's
// date and time, bytes 24-35), which would make outputs that embed it differ from run to run; the stamp is set to
// 2000-01-01 00:00:00 (the profile carries no ID over these bytes).
std::string profile_bytes(const Lcms& l, cmsHPROFILE profile) {
  cmsUInt32Number size = 0;
  if (profile == nullptr || !l.save(profile, nullptr, &size) || size == 0) return {};
  std::string bytes(size, '\0');
  if (!l.save(profile, bytes.data(), &size)) return {};
  bytes.resize(size);
  if (bytes.size() >= 36) {
    static const char kDate[12] = {0x07, static_cast<char>(0xD0), 0, 1, 0, 1, 0, 0, 0, 0, 0, 0};
    bytes.replace(24, 12, kDate, 12);
  }
  return bytes;
}

std::string made_profile(bool gray) {
  const Lcms& l = lcms();
  if (!l.error.empty()) return {};
  const Profile p{l, gray ? make_gray(l) : l.srgb()};
  return profile_bytes(l, p.handle);
}

bool looks_srgb(const std::string& icc);

// ITU-T H.273's transfer characteristics that an ICC tone curve states (lcms2's parametric types): the sRGB curve (13),
// BT.709's and its kin's (1, 6, 14, 15), gamma 2.2 (4), gamma 2.8 (5) and linear (8); null for others (PQ, HLG: HDR,
// which no ICC curve of an SDR output states).
cmsToneCurve* h273_curve(const Lcms& l, int transfer) {
  switch (transfer) {
    case 13: {
      const cmsFloat64Number p[] = {2.4, 1.0 / 1.055, 0.055 / 1.055, 1.0 / 12.92, 0.04045};
      return l.curve(nullptr, 4, p);
    }
    case 1:
    case 6:
    case 14:
    case 15: {  // the inverse of BT.709's camera curve: linear below 0.081, then ((V + 0.099) / 1.099)^(1 / 0.45)
      const cmsFloat64Number p[] = {1.0 / 0.45, 1.0 / 1.099, 0.099 / 1.099, 1.0 / 4.5, 0.081};
      return l.curve(nullptr, 4, p);
    }
    case 4:
    case 5:
    case 8: {
      const cmsFloat64Number p[] = {transfer == 4 ? 2.2 : transfer == 5 ? 2.8 : 1.0};
      return l.curve(nullptr, 1, p);
    }
    default: return nullptr;
  }
}

}  // namespace

std::string icc_of_nclx(const NclxColour& nclx) {
  // H.273's colour primaries: red, green, blue and white xy.
  struct Primaries {
    int code;
    cmsCIExyYTRIPLE rgb;
    cmsCIExyY white;
  };
  constexpr cmsCIExyY kD65{0.3127, 0.3290, 1.0};
  constexpr cmsCIExyY kC{0.310, 0.316, 1.0};
  static const Primaries kTable[] = {
      {1, {{0.64, 0.33, 1}, {0.30, 0.60, 1}, {0.15, 0.06, 1}}, kD65},
      {4, {{0.67, 0.33, 1}, {0.21, 0.71, 1}, {0.14, 0.08, 1}}, kC},
      {5, {{0.64, 0.33, 1}, {0.29, 0.60, 1}, {0.15, 0.06, 1}}, kD65},
      {6, {{0.630, 0.340, 1}, {0.310, 0.595, 1}, {0.155, 0.070, 1}}, kD65},
      {7, {{0.630, 0.340, 1}, {0.310, 0.595, 1}, {0.155, 0.070, 1}}, kD65},
      {8, {{0.681, 0.319, 1}, {0.243, 0.692, 1}, {0.145, 0.049, 1}}, kC},
      {9, {{0.708, 0.292, 1}, {0.170, 0.797, 1}, {0.131, 0.046, 1}}, kD65},
      {11, {{0.680, 0.320, 1}, {0.265, 0.690, 1}, {0.150, 0.060, 1}}, {0.314, 0.351, 1.0}},
      {12, {{0.680, 0.320, 1}, {0.265, 0.690, 1}, {0.150, 0.060, 1}}, kD65},
      {22, {{0.630, 0.340, 1}, {0.295, 0.605, 1}, {0.155, 0.077, 1}}, kD65},
  };
  const int primaries = nclx.primaries == 2 ? 1 : nclx.primaries;  // unspecified: BT.709's
  const int transfer = nclx.transfer == 2 ? 13 : nclx.transfer;     // unspecified: the sRGB curve
  if (primaries == 1 && transfer == 13) return {};                   // sRGB itself
  const Primaries* row = nullptr;
  for (const Primaries& p : kTable) {
    if (p.code == primaries) row = &p;
  }
  if (row == nullptr) return {};
  const Lcms& l = lcms();
  if (!l.error.empty()) return {};
  cmsToneCurve* curve = h273_curve(l, transfer);
  if (curve == nullptr) return {};
  cmsToneCurve* curves[3] = {curve, curve, curve};
  const Profile p{l, l.rgb(&row->white, &row->rgb, curves)};
  l.free_curve(curve);
  return profile_bytes(l, p.handle);
}

const std::string& srgb_profile() {
  static const std::string bytes = made_profile(false);
  return bytes;
}

const std::string& srgb_gray_profile() {
  static const std::string bytes = made_profile(true);
  return bytes;
}

SrgbTransform::SrgbTransform(const std::string& icc, int channels, const std::string& what) : channels_(channels) {
  const Lcms& l = need_lcms(what);
  const Profile in{l, l.open(icc.data(), static_cast<cmsUInt32Number>(icc.size()))};
  if (in.handle == nullptr) throw Error(ErrorCode::Format, what + ": its ICC profile cannot be read");
  const bool gray = channels <= 2;
  if (l.space(in.handle) != (gray ? cmsSigGrayData : cmsSigRgbData)) {
    throw Error(ErrorCode::Format, what + ": its ICC profile is not " + (gray ? "a gray" : "an RGB") +
                                       " profile, as its " + std::to_string(channels) + " channels need");
  }
  const Profile out{l, gray ? make_gray(l) : l.srgb()};
  const bool alpha = channels == 2 || channels == 4;
  const cmsUInt32Number format = gray ? (alpha ? (TYPE_GRAY_FLT | EXTRA_SH(1)) : TYPE_GRAY_FLT)
                                      : (alpha ? TYPE_RGBA_FLT : TYPE_RGB_FLT);
  // No cache: one transform serves several threads. The alpha channel is copied through.
  transform_ = l.create(in.handle, format, out.handle, format, INTENT_RELATIVE_COLORIMETRIC,
                        cmsFLAGS_NOCACHE | cmsFLAGS_COPY_ALPHA);
  if (transform_ == nullptr) throw Error(ErrorCode::Format, what + ": lcms2 cannot convert its ICC profile to sRGB");
}

SrgbTransform::~SrgbTransform() {
  if (transform_ != nullptr) lcms().destroy(transform_);
}

void SrgbTransform::apply(float* pixels, std::size_t count) const {
  constexpr std::size_t kChunk = 1 << 16;  // cmsDoTransform counts in 32 bits
  for (std::size_t done = 0; done < count; done += kChunk) {
    float* at = pixels + done * static_cast<std::size_t>(channels_);
    const auto n = static_cast<cmsUInt32Number>(std::min(kChunk, count - done));
    lcms().run(transform_, at, at, n);
  }
}

int profile_channels(const std::string& icc) {
  const Lcms& l = need_lcms("ICC profile");
  const Profile p{l, l.open(icc.data(), static_cast<cmsUInt32Number>(icc.size()))};
  if (p.handle == nullptr) return -1;
  const cmsColorSpaceSignature space = l.space(p.handle);
  return space == cmsSigRgbData ? 3 : space == cmsSigGrayData ? 1 : 0;
}

const std::string& SrgbTransform::profile() const { return channels_ <= 2 ? srgb_gray_profile() : srgb_profile(); }

bool is_srgb_profile(const std::string& icc) {
  if (icc.empty()) return true;
  // A folder of photos from one camera carries one profile: each is looked at once a process.
  // Kept by their bytes, at most 64 of them.
  static std::mutex mutex;
  static std::map<std::string, bool> known;
  {
    const std::lock_guard<std::mutex> lock(mutex);
    if (const auto it = known.find(icc); it != known.end()) return it->second;
  }
  const bool srgb = looks_srgb(icc);
  const std::lock_guard<std::mutex> lock(mutex);
  if (known.size() < 64 && icc.size() <= (64u << 10)) known.emplace(icc, srgb);  // a few small profiles only
  return srgb;
}

namespace {

bool looks_srgb(const std::string& icc) {
  const Lcms& l = need_lcms("ICC profile");
  int channels = 3;
  {
    const Profile p{l, l.open(icc.data(), static_cast<cmsUInt32Number>(icc.size()))};
    if (p.handle == nullptr) return false;
    if (l.space(p.handle) == cmsSigGrayData) {
      channels = 1;
    } else if (l.space(p.handle) != cmsSigRgbData) {
      return false;
    }
  }
  try {
    const SrgbTransform to_srgb(icc, channels, "profile");
    // A grid of colours (every combination of 0, 1/4, ..., 1), converted: an sRGB profile moves none by two levels
    // of 8 bits (the published sRGB IEC61966-2.1 and lcms2's differ by one at saturated greens; Adobe RGB or
    // Display P3 by tens).
    std::vector<float> grid;
    for (int i = 0; i < 125; ++i) {
      for (int k = 0, v = i; k < channels; ++k, v /= 5) grid.push_back(static_cast<float>(v % 5) / 4.0f);
      if (channels == 1 && i >= 5) break;
    }
    std::vector<float> converted = grid;
    to_srgb.apply(converted.data(), converted.size() / static_cast<std::size_t>(channels));
    for (std::size_t i = 0; i < grid.size(); ++i) {
      if (!(std::fabs(converted[i] - grid[i]) < 2.0f / 255.0f)) return false;
    }
    return true;
  } catch (const Error& e) {
    if (e.code() == ErrorCode::Io) throw;
    return false;
  }
}

}  // namespace

}  // namespace rsz::io
