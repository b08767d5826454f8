// WebP: the codec entry, the signature and the header probe. Pixels go through OpenCV imgcodecs and the ICCP, EXIF
// and XMP chunks through libwebpmux, both in rsz's OpenCV module (image_opencv.cpp).
//
// The probe reads the size and alpha flag of the first chunk (VP8, VP8L or VP8X; animations are refused), and (with
// `whole`) refuses a file that does not hold the whole RIFF container.
#include "codecs/header_reader.h"

namespace rsz::io::detail {
namespace {

bool sniff_webp(const std::uint8_t* data, std::size_t size) {
  return starts_with(data, size, "RIFF", 4) && starts_with(data, size, "WEBP", 4, 8);
}

HeaderFacts probe_webp(const Codec& codec, const std::string& path, const FileBytes& bytes, bool whole,
                       const ImageReadOptions& options) {
  const Bytes in(bytes);
  HeaderFacts facts;
  facts.bit_depth = 8;
  if (!in.has(12, 8)) fail_truncated(path, codec, in.size(), "inside the header");
  const std::size_t payload = 20;
  if (std::memcmp(in.at(12), "VP8 ", 4) == 0) {
    if (!in.has(payload, 10)) fail_truncated(path, codec, in.size(), "inside the header");
    if (in.u8(payload + 3) != 0x9d || in.u8(payload + 4) != 0x01 || in.u8(payload + 5) != 0x2a) {
      fail_corrupt(path, codec, "the VP8 frame has no start code");
    }
    facts.width = in.le16(payload + 6) & 0x3fff;
    facts.height = in.le16(payload + 8) & 0x3fff;
    facts.channels = 3;
  } else if (std::memcmp(in.at(12), "VP8L", 4) == 0) {
    if (!in.has(payload, 5)) fail_truncated(path, codec, in.size(), "inside the header");
    if (in.u8(payload) != 0x2f) fail_corrupt(path, codec, "the VP8L data has no signature");
    const std::uint32_t bits = in.le32(payload + 1);
    facts.width = (bits & 0x3fff) + 1;
    facts.height = ((bits >> 14) & 0x3fff) + 1;
    facts.channels = (bits >> 28) & 1 ? 4 : 3;
  } else if (std::memcmp(in.at(12), "VP8X", 4) == 0) {
    if (!in.has(payload, 10)) fail_truncated(path, codec, in.size(), "inside the header");
    const std::uint32_t flags = in.u8(payload);
    if (flags & 0x02) fail(ErrorCode::Format, path, "animated WebP is not supported; a still WebP image is allowed");
    facts.width = std::int64_t{in.le24(payload + 4)} + 1;
    facts.height = std::int64_t{in.le24(payload + 7)} + 1;
    facts.channels = flags & 0x10 ? 4 : 3;
  } else {
    fail_corrupt(path, codec, "the first chunk is not VP8, VP8L or VP8X");
  }
  if (facts.width <= 0 || facts.height <= 0) {
    fail_corrupt(path, codec, "the header gives size " + size_text(facts.width, facts.height));
  }
  check_pixel_limit(path, facts.width, facts.height, options);
  if (whole && std::uint64_t{in.le32(4)} + 8 > in.size()) {
    fail_truncated(path, codec, in.size(),
                   "before the end of its " + std::to_string(std::uint64_t{in.le32(4)} + 8) + "-byte RIFF container");
  }
  return facts;
}

std::vector<std::uint8_t> encode_webp(const Codec& codec, const std::string& path, const Image& image,
                                      const ImageWriteOptions& options) {
  constexpr int kWebpQuality = 64;  // cv::IMWRITE_WEBP_QUALITY; above 100: lossless
  // OpenCV's WebP quality above 100 means lossless.
  const int quality = options.lossless ? 101 : options.quality > 0 ? options.quality : kDefaultWebpQuality;
  return encode_opencv(codec, path, image, {kWebpQuality, quality});
}

}  // namespace

Codec webp_codec() {
  Codec c = opencv_codec();
  c.format = ImageFormat::Webp;
  c.name = "webp";
  c.display_name = "WebP";
  c.family = "WebP";
  c.extensions = {".webp", nullptr};
  c.sniff = sniff_webp;
  c.probe = probe_webp;
  c.metadata_read = kIcc | kExif | kXmp;  // ICCP, EXIF and "XMP " chunks
  c.encode = encode_webp;
  c.depths = kWrites8;
  c.channels = kGray | kRgb | kRgba;
  c.gray_as_rgb = true;  // WebP has no gray
  c.max_side = 16383;    // the VP8L / VP8X limit, below OpenCV's
  c.max_side_reason = "";
  c.metadata_written = kIcc | kExif | kXmp;
  c.module_ext = ".webp";
  return c;
}

}  // namespace rsz::io::detail
