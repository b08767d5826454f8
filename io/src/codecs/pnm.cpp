// PPM and PGM (the binary and plain forms; PBM bitmaps are read as PGM): the codec entries, the signatures and the
// header probe they share. Pixels go through OpenCV imgcodecs (image_opencv.cpp), which writes binary files.
//
// The probe reads the size and maximum value, and (with `whole`) refuses a binary file that does not hold the whole
// pixel array, or a plain one too short to hold a character per sample.
#include <cctype>
#include <climits>

#include "codecs/header_reader.h"

namespace rsz::io::detail {
namespace {

// "P<kind><whitespace>".
bool pnm_kind(const std::uint8_t* data, std::size_t size, char kind) {
  return size >= 3 && data[0] == 'P' && std::isspace(data[2]) && data[1] == kind;
}
bool sniff_ppm(const std::uint8_t* data, std::size_t size) {
  return pnm_kind(data, size, '3') || pnm_kind(data, size, '6');
}
bool sniff_pgm(const std::uint8_t* data, std::size_t size) {  // PBM (P1, P4) too
  return pnm_kind(data, size, '1') || pnm_kind(data, size, '2') || pnm_kind(data, size, '4') ||
         pnm_kind(data, size, '5');
}

HeaderFacts probe_pnm(const Codec& codec, const std::string& path, const FileBytes& bytes, bool whole,
                      const ImageReadOptions& options) {
  const Bytes in(bytes);
  HeaderFacts facts;
  const std::uint32_t kind = in.u8(1) - '0';
  const bool bitmap = kind == 1 || kind == 4;
  std::size_t pos = 2;
  auto next_number = [&](const char* what) -> std::int64_t {
    for (;;) {
      if (!in.has(pos, 1))
        fail_truncated(path, codec, in.size(), std::string("inside the header, before the ") + what);
      const std::uint32_t c = in.u8(pos);
      if (c == '#') {
        while (in.has(pos, 1) && in.u8(pos) != '\n' && in.u8(pos) != '\r') ++pos;
      } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f') {
        ++pos;
      } else {
        break;
      }
    }
    std::int64_t value = 0;
    std::size_t digits = 0;
    while (in.has(pos, 1) && in.u8(pos) >= '0' && in.u8(pos) <= '9') {
      value = value * 10 + (in.u8(pos) - '0');
      if (value > INT_MAX) fail_corrupt(path, codec, std::string("the ") + what + " is too large");
      ++pos;
      ++digits;
    }
    if (digits == 0) fail_corrupt(path, codec, std::string("the header has no ") + what);
    return value;
  };
  facts.width = next_number("width");
  facts.height = next_number("height");
  const std::int64_t maxval = bitmap ? 1 : next_number("maximum value");
  if (facts.width <= 0 || facts.height <= 0) {
    fail_corrupt(path, codec, "the header gives size " + size_text(facts.width, facts.height));
  }
  if (maxval < 1 || maxval > 65535) {
    fail_corrupt(path, codec, "maximum value " + std::to_string(maxval) + " is outside 1..65535");
  }
  check_pixel_limit(path, facts.width, facts.height, options);
  facts.channels = kind == 3 || kind == 6 ? 3 : 1;
  facts.bit_depth = maxval > 255 ? 16 : 8;
  if (whole && (kind == 4 || kind == 5 || kind == 6)) {
    const std::size_t data_start = pos + 1;  // one whitespace byte after the last header number
    std::uint64_t needed = 0;
    if (kind == 4) {
      needed = (static_cast<std::uint64_t>(facts.width) + 7) / 8 * static_cast<std::uint64_t>(facts.height);
    } else {
      needed = static_cast<std::uint64_t>(facts.width) * static_cast<std::uint64_t>(facts.height) *
               static_cast<std::uint64_t>(facts.channels) * static_cast<std::uint64_t>(facts.bit_depth / 8);
    }
    if (data_start > in.size() || needed > in.size() - data_start) {
      fail_truncated(path, codec, in.size(),
                     "before the end of its " + size_text(facts.width, facts.height) + " pixel array");
    }
  }
  if (whole && (kind == 1 || kind == 2 || kind == 3)) {
    // Plain (ASCII) samples take at least a character each, and PGM / PPM samples a separator between them: a tiny
    // file claiming a huge size is refused here, before the decoder allocates its pixels.
    const std::uint64_t samples = static_cast<std::uint64_t>(facts.width) * static_cast<std::uint64_t>(facts.height) *
                                  static_cast<std::uint64_t>(facts.channels);
    const std::uint64_t needed = kind == 1 ? samples : 2 * samples - 1;
    const std::size_t data_start = pos + 1;
    if (data_start > in.size() || needed > in.size() - data_start) {
      fail_truncated(path, codec, in.size(),
                     "before the end of its " + size_text(facts.width, facts.height) + " plain-text pixel array");
    }
  }
  return facts;
}

std::vector<std::uint8_t> encode_pnm(const Codec& codec, const std::string& path, const Image& image,
                                     const ImageWriteOptions&) {
  constexpr int kPxmBinary = 32;  // cv::IMWRITE_PXM_BINARY
  return encode_opencv(codec, path, image, {kPxmBinary, 1});
}

// What PPM and PGM share.
Codec pnm_codec() {
  Codec c = opencv_codec();
  c.family = "PPM/PGM";
  c.probe = probe_pnm;
  c.encode = encode_pnm;
  c.depths = kWrites8 | kWrites16;
  return c;
}

}  // namespace

Codec ppm_codec() {
  Codec c = pnm_codec();
  c.format = ImageFormat::Ppm;
  c.name = "ppm";
  c.display_name = "PPM";
  c.extensions = {".ppm", nullptr};
  c.read_only_extensions = {".pnm"};  // any of the family: the first bytes tell which
  c.sniff = sniff_ppm;
  c.channels = kRgb;
  c.channels_refusal = "holds RGB (3 channels) only";
  c.channels_advice = "write gray as .pgm and alpha as .png or .tif/.tiff";
  c.module_ext = ".ppm";
  return c;
}

Codec pgm_codec() {
  Codec c = pnm_codec();
  c.format = ImageFormat::Pgm;
  c.name = "pgm";
  c.display_name = "PGM";
  c.extensions = {".pgm", nullptr};
  c.read_only_extensions = {".pbm"};  // bitmaps are read as gray
  c.sniff = sniff_pgm;
  c.channels = kGray;
  c.channels_refusal = "holds gray (1 channel) only";
  c.channels_advice = "write RGB as .ppm and alpha as .png or .tif/.tiff";
  c.module_ext = ".pgm";
  return c;
}

}  // namespace rsz::io::detail
