// JPEG: the codec entry, the signature and the header probe. The decoder and encoder are libjpeg-turbo's
// (image_jpeg.cpp).
//
// The probe walks the marker segments up to the end-of-image marker (FF D9), through the entropy-coded data of every
// scan; a file that ends before it is refused. The frame header (SOFn) gives the size, APP1 "Exif" gives the
// orientation (tag 0x0112). Stray bytes before a marker are skipped, as libjpeg skips them.
#include "codecs/header_reader.h"

namespace rsz::io::detail {
namespace {

bool sniff_jpeg(const std::uint8_t* data, std::size_t size) { return starts_with(data, size, "\xff\xd8\xff", 3); }

// The orientation (1..8) in the TIFF structure of an APP1 Exif payload, 1 when absent or invalid.
int exif_orientation(const std::uint8_t* tiff, std::size_t length) {
  const std::size_t at = exif_orientation_offset(tiff, length);
  if (at == kNoOrientation) return 1;
  const EndianReader r{tiff, tiff[0] == 'I'};
  const auto value = static_cast<int>(r.get(at, 2));
  return value >= 1 && value <= 8 ? value : 1;
}

bool is_sof(std::uint32_t marker) {
  return marker >= 0xc0 && marker <= 0xcf && marker != 0xc4 && marker != 0xc8 && marker != 0xcc;
}

// Walks the marker segments. `whole`: up to the end-of-image marker, refusing a file that ends before it;
// otherwise up to the frame header only.
HeaderFacts probe_jpeg(const Codec& codec, const std::string& path, const FileBytes& bytes, bool whole,
                       const ImageReadOptions& options) {
  const Bytes in(bytes);
  const char* kBeforeEoi = "before the end-of-image marker (FF D9)";
  HeaderFacts facts;
  bool have_frame = false;
  bool have_exif = false;
  bool have_scan = false;
  std::size_t pos = 2;  // after SOI (checked by the sniffer)
  for (;;) {
    // Bytes where a marker should start (a writer's or a downloader's garbage, FF 00 pairs included) are skipped up
    // to the next marker, as libjpeg skips them: it warns of "extraneous bytes before marker" and decodes the same
    // pixels, so the file is read as other decoders read it.
    if (!in.has(pos, 1)) fail_truncated(path, codec, in.size(), kBeforeEoi);
    if (in.u8(pos) != 0xff) {
      const void* ff = std::memchr(in.at(pos), 0xff, in.size() - pos);
      pos = ff != nullptr ? static_cast<std::size_t>(static_cast<const std::uint8_t*>(ff) - in.at(0)) : in.size();
      continue;
    }
    while (in.has(pos + 1, 1) && in.u8(pos + 1) == 0xff) ++pos;  // fill bytes
    if (!in.has(pos + 1, 1)) fail_truncated(path, codec, in.size(), kBeforeEoi);
    const std::uint32_t marker = in.u8(pos + 1);
    pos += 2;
    if (marker == 0x00) continue;  // FF 00 outside scan data: more skipped bytes
    if (marker == 0xd9) {
      if (!have_frame || !have_scan) fail_corrupt(path, codec, "the end-of-image marker comes before any image data");
      return facts;
    }
    if (marker == 0xd8) fail_corrupt(path, codec, "unexpected marker FF D8 at byte " + std::to_string(pos - 2));
    if ((marker >= 0xd0 && marker <= 0xd7) || marker == 0x01) continue;  // markers without a segment
    if (!in.has(pos, 2)) fail_truncated(path, codec, in.size(), kBeforeEoi);
    const std::size_t length = in.be16(pos);
    if (length < 2) fail_corrupt(path, codec, "a marker segment of length " + std::to_string(length));
    if (!in.has(pos, length)) fail_truncated(path, codec, in.size(), kBeforeEoi);
    const std::size_t body = pos + 2;
    const std::size_t body_length = length - 2;
    if (marker >= 0xe0 && marker <= 0xef && !have_frame) facts.metadata_bytes += body_length;  // APPn
    if (is_sof(marker) && !have_frame) {
      if (body_length < 6) fail_corrupt(path, codec, "a frame header shorter than 6 bytes");
      have_frame = true;
      facts.progressive = marker == 0xc2 || marker == 0xc6 || marker == 0xca || marker == 0xce;
      const std::uint32_t precision = in.u8(body);
      facts.height = in.be16(body + 1);
      facts.width = in.be16(body + 3);
      const std::uint32_t components = in.u8(body + 5);
      if (facts.width == 0 || facts.height == 0) {
        fail_corrupt(path, codec,
                     "the frame header gives size " + size_text(facts.width, facts.height) +
                         " (a height set later by a DNL marker is not supported)");
      }
      if (precision != 8) {
        fail(ErrorCode::Format, path, std::to_string(precision) + "-bit JPEG is not supported; 8-bit JPEG is allowed");
      }
      if (components != 1 && components != 3 && components != 4) {
        fail(ErrorCode::Format, path,
             "a JPEG with " + std::to_string(components) +
                 " components is not supported; 1 (gray), 3 (colour) or 4 (CMYK) components are allowed");
      }
      check_pixel_limit(path, facts.width, facts.height, options);
      facts.channels = components == 1 ? 1 : 3;  // OpenCV converts CMYK to colour
      facts.components = static_cast<int>(components);
      facts.bit_depth = 8;
      if (!whole) return facts;
    } else if (marker == 0xe1 && !have_exif && body_length >= 6 && std::memcmp(in.at(body), "Exif\0\0", 6) == 0) {
      have_exif = true;
      facts.orientation = exif_orientation(in.at(body + 6), body_length - 6);
    }
    pos += length;
    if (marker == 0xda) {
      if (!have_frame) fail_corrupt(path, codec, "a scan comes before the frame header");
      have_scan = true;
      // Entropy-coded data: it ends at the first marker other than a stuffed zero (FF 00) or a restart (FF Dn).
      for (;;) {
        if (!in.has(pos, 2)) fail_truncated(path, codec, in.size(), kBeforeEoi);
        const void* ff = std::memchr(in.at(pos), 0xff, in.size() - pos);
        if (ff == nullptr) {
          pos = in.size();
          continue;
        }
        pos = static_cast<std::size_t>(static_cast<const std::uint8_t*>(ff) - in.at(0));
        if (!in.has(pos, 2)) fail_truncated(path, codec, in.size(), kBeforeEoi);
        const std::uint32_t next = in.u8(pos + 1);
        if (next == 0x00 || (next >= 0xd0 && next <= 0xd7)) {
          pos += 2;
        } else if (next == 0xff) {
          pos += 1;
        } else {
          break;
        }
      }
    }
  }
}

}  // namespace

Codec jpeg_codec() {
  Codec c;
  c.format = ImageFormat::Jpeg;
  c.name = "jpeg";
  c.display_name = "JPEG";
  c.family = "JPEG";
  c.extensions = {".jpg", ".jpeg"};
  c.sniff = sniff_jpeg;
  c.probe = probe_jpeg;
  c.info = info_from_header;
  c.decode = read_jpeg;
  c.open_rows = open_jpeg_rows;
  c.metadata_read = kIcc | kExif | kXmp;  // APP2 ICC_PROFILE, APP1 Exif, APP1 XMP
  c.max_shrink = 8;                        // libjpeg's DCT scaling: 1/2, 1/4, 1/8
  c.encode_rows = encode_jpeg;
  c.depths = kWrites8;
  c.channels = kGray | kRgb;
  c.channels_refusal = "cannot hold an alpha channel";
  c.max_side = 65500;  // libjpeg's JPEG_MAX_DIMENSION
  c.metadata_written = kIcc | kExif | kXmp;
  return c;
}

}  // namespace rsz::io::detail
