// Header parsers for JPEG, BMP, PPM/PGM, WebP and TIFF (no codec library), the EXIF orientation mapping, and what
// each format can hold.
//
// Before a codec sees the bytes, a small bounds-checked header parser per format reads the image size, so that
// images above max_pixels are refused before any pixel buffer exists (all five formats), and catches files cut
// short that a codec would otherwise decode partially with only a warning:
//  * JPEG: the marker segments are walked up to the end-of-image marker (FF D9), through the entropy-coded data of
//    every scan; a file that ends before it is refused. The frame header (SOFn) gives the size, APP1 "Exif" gives
//    the orientation (tag 0x0112). Stray bytes before a marker are skipped, as libjpeg skips them.
//  * BMP (uncompressed and bit-field), binary PPM/PGM: the file must hold the whole pixel array the header
//    announces. WebP: the file must hold the whole RIFF container. TIFF (and BigTIFF): the first directory gives
//    the size and the Orientation tag (274); truncation is left to libtiff.
#include <climits>
#include <cstring>

#include "image_internal.h"

namespace rsz::io::detail {
namespace {

// Bounds-checked access to the file bytes. Asking for bytes past the end of an incomplete prefix throws
// NeedMoreBytes; past the end of the whole file, has() answers false.
class Bytes {
 public:
  explicit Bytes(const FileBytes& bytes) : b_(bytes) {}
  std::size_t size() const { return b_.size; }
  bool has(std::size_t offset, std::size_t count) const {
    if (offset <= b_.size && count <= b_.size - offset) return true;
    if (!b_.complete) throw NeedMoreBytes{};
    return false;
  }
  const std::uint8_t* at(std::size_t offset) const { return b_.data + offset; }
  std::uint32_t u8(std::size_t offset) const { return b_.data[offset]; }
  std::uint32_t be16(std::size_t offset) const { return (u8(offset) << 8) | u8(offset + 1); }
  std::uint32_t le16(std::size_t offset) const { return u8(offset) | (u8(offset + 1) << 8); }
  std::uint32_t le24(std::size_t offset) const { return le16(offset) | (u8(offset + 2) << 16); }
  std::uint32_t le32(std::size_t offset) const { return le16(offset) | (le16(offset + 2) << 16); }

 private:
  FileBytes b_;
};

// Reads 16/32/64-bit TIFF-style integers of either byte order from a buffer.
struct EndianReader {
  const std::uint8_t* data;
  bool little;
  std::uint64_t get(std::size_t offset, int count) const {
    std::uint64_t value = 0;
    for (int i = 0; i < count; ++i) {
      const int index = little ? count - 1 - i : i;
      value = (value << 8) | data[offset + static_cast<std::size_t>(index)];
    }
    return value;
  }
};

std::string channels_text(int channels) {
  switch (channels) {
    case 1: return "1 channel (gray)";
    case 2: return "2 channels (gray + alpha)";
    case 3: return "3 channels (RGB)";
    case 4: return "4 channels (RGBA)";
    default: return std::to_string(channels) + " channels";
  }
}

}  // namespace

const char* display_name(ImageFormat format) {
  switch (format) {
    case ImageFormat::Jpeg: return "JPEG";
    case ImageFormat::Bmp: return "BMP";
    case ImageFormat::Tiff: return "TIFF";
    case ImageFormat::Webp: return "WebP";
    case ImageFormat::Ppm: return "PPM";
    case ImageFormat::Pgm: return "PGM";
    case ImageFormat::Png: return "PNG";
    case ImageFormat::Unknown: break;
  }
  return "image";
}

[[noreturn]] static void fail_truncated(const std::string& path, ImageFormat format, std::size_t size,
                                 const std::string& before) {
  fail(ErrorCode::Format, path,
       std::string("the ") + display_name(format) + " file is truncated: it ends after " + std::to_string(size) +
           " bytes, " + before + "; a complete " + display_name(format) + " file is required");
}

void fail_corrupt(const std::string& path, ImageFormat format, const std::string& what) {
  fail(ErrorCode::Format, path,
       std::string("not a valid ") + display_name(format) + " file: " + what + "; a valid " + display_name(format) +
           " file is required");
}

std::size_t exif_orientation_offset(const std::uint8_t* tiff, std::size_t length) {
  if (length < 8) return kNoOrientation;
  bool little = false;
  if (tiff[0] == 'I' && tiff[1] == 'I') {
    little = true;
  } else if (!(tiff[0] == 'M' && tiff[1] == 'M')) {
    return kNoOrientation;
  }
  const EndianReader r{tiff, little};
  if (r.get(2, 2) != 42) return kNoOrientation;
  const std::uint64_t ifd = r.get(4, 4);
  if (ifd < 8 || ifd > length - 2) return kNoOrientation;
  const std::uint64_t count = r.get(static_cast<std::size_t>(ifd), 2);
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::uint64_t entry = ifd + 2 + 12 * i;
    if (entry + 12 > length) break;
    const auto e = static_cast<std::size_t>(entry);
    if (r.get(e, 2) != 0x0112) continue;
    if (r.get(e + 2, 2) != 3 || r.get(e + 4, 4) < 1) return kNoOrientation;  // must be one SHORT
    return e + 8;
  }
  return kNoOrientation;
}

namespace {

// ---------------------------------------------------------------------------------------------------------------
// JPEG

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
HeaderFacts parse_jpeg(const std::string& path, const Bytes& in, bool whole, const ImageReadOptions& options) {
  constexpr ImageFormat kJpeg = ImageFormat::Jpeg;
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
    if (!in.has(pos, 1)) fail_truncated(path, kJpeg, in.size(), kBeforeEoi);
    if (in.u8(pos) != 0xff) {
      const void* ff = std::memchr(in.at(pos), 0xff, in.size() - pos);
      pos = ff != nullptr ? static_cast<std::size_t>(static_cast<const std::uint8_t*>(ff) - in.at(0)) : in.size();
      continue;
    }
    while (in.has(pos + 1, 1) && in.u8(pos + 1) == 0xff) ++pos;  // fill bytes
    if (!in.has(pos + 1, 1)) fail_truncated(path, kJpeg, in.size(), kBeforeEoi);
    const std::uint32_t marker = in.u8(pos + 1);
    pos += 2;
    if (marker == 0x00) continue;  // FF 00 outside scan data: more skipped bytes
    if (marker == 0xd9) {
      if (!have_frame || !have_scan) fail_corrupt(path, kJpeg, "the end-of-image marker comes before any image data");
      return facts;
    }
    if (marker == 0xd8) fail_corrupt(path, kJpeg, "unexpected marker FF D8 at byte " + std::to_string(pos - 2));
    if ((marker >= 0xd0 && marker <= 0xd7) || marker == 0x01) continue;  // markers without a segment
    if (!in.has(pos, 2)) fail_truncated(path, kJpeg, in.size(), kBeforeEoi);
    const std::size_t length = in.be16(pos);
    if (length < 2) fail_corrupt(path, kJpeg, "a marker segment of length " + std::to_string(length));
    if (!in.has(pos, length)) fail_truncated(path, kJpeg, in.size(), kBeforeEoi);
    const std::size_t body = pos + 2;
    const std::size_t body_length = length - 2;
    if (is_sof(marker) && !have_frame) {
      if (body_length < 6) fail_corrupt(path, kJpeg, "a frame header shorter than 6 bytes");
      have_frame = true;
      const std::uint32_t precision = in.u8(body);
      facts.height = in.be16(body + 1);
      facts.width = in.be16(body + 3);
      const std::uint32_t components = in.u8(body + 5);
      if (facts.width == 0 || facts.height == 0) {
        fail_corrupt(path, kJpeg,
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
      facts.bit_depth = 8;
      if (!whole) return facts;
    } else if (marker == 0xe1 && !have_exif && body_length >= 6 && std::memcmp(in.at(body), "Exif\0\0", 6) == 0) {
      have_exif = true;
      facts.orientation = exif_orientation(in.at(body + 6), body_length - 6);
    }
    pos += length;
    if (marker == 0xda) {
      if (!have_frame) fail_corrupt(path, kJpeg, "a scan comes before the frame header");
      have_scan = true;
      // Entropy-coded data: it ends at the first marker other than a stuffed zero (FF 00) or a restart (FF Dn).
      for (;;) {
        if (!in.has(pos, 2)) fail_truncated(path, kJpeg, in.size(), kBeforeEoi);
        const void* ff = std::memchr(in.at(pos), 0xff, in.size() - pos);
        if (ff == nullptr) {
          pos = in.size();
          continue;
        }
        pos = static_cast<std::size_t>(static_cast<const std::uint8_t*>(ff) - in.at(0));
        if (!in.has(pos, 2)) fail_truncated(path, kJpeg, in.size(), kBeforeEoi);
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

// ---------------------------------------------------------------------------------------------------------------
// BMP

HeaderFacts parse_bmp(const std::string& path, const Bytes& in, bool whole, const ImageReadOptions& options) {
  constexpr ImageFormat kBmp = ImageFormat::Bmp;
  HeaderFacts facts;
  if (!in.has(0, 18)) fail_truncated(path, kBmp, in.size(), "inside the header");
  const std::uint32_t offset = in.le32(10);
  const std::uint32_t dib = in.le32(14);
  std::uint32_t bpp = 0;
  std::uint32_t compression = 0;
  std::uint32_t colours_used = 0;
  std::size_t palette_entry = 4;
  if (dib == 12) {
    if (!in.has(14, 12)) fail_truncated(path, kBmp, in.size(), "inside the header");
    facts.width = in.le16(18);
    facts.height = in.le16(20);
    bpp = in.le16(24);
    palette_entry = 3;
  } else if (dib >= 40 && dib <= 1024) {
    if (!in.has(14, 40)) fail_truncated(path, kBmp, in.size(), "inside the header");
    facts.width = static_cast<std::int32_t>(in.le32(18));
    facts.height = static_cast<std::int32_t>(in.le32(22));
    if (facts.height < 0) facts.height = -facts.height;  // top-down rows
    bpp = in.le16(28);
    compression = in.le32(30);
    colours_used = in.le32(46);
  } else {
    fail_corrupt(path, kBmp, "header size " + std::to_string(dib) + " is not supported (12 or 40 to 1024 is)");
  }
  if (facts.width <= 0 || facts.height <= 0) {
    fail_corrupt(path, kBmp, "the header gives size " + size_text(facts.width, facts.height));
  }
  const bool supported = ((bpp == 1 || bpp == 4 || bpp == 8 || bpp == 24 || bpp == 32) && compression == 0) ||
                         ((bpp == 16 || bpp == 32) && (compression == 0 || compression == 3)) ||
                         (bpp == 8 && compression == 1) || (bpp == 4 && compression == 2);
  if (!supported) {
    fail(ErrorCode::Format, path,
         std::to_string(bpp) + "-bit BMP with compression " + std::to_string(compression) +
             " is not supported; uncompressed 1/4/8/16/24/32-bit, bit-field 16/32-bit and RLE4/RLE8 BMP are allowed");
  }
  check_pixel_limit(path, facts.width, facts.height, options);
  facts.bit_depth = 8;
  facts.channels = 3;
  if (bpp <= 8 && bpp > 0) {
    // OpenCV reads a palette of grays as one channel.
    const std::size_t entries = colours_used > 0 && colours_used <= 256 ? colours_used : std::size_t{1} << bpp;
    const std::size_t start = 14 + dib;
    if (in.has(start, entries * palette_entry)) {
      bool gray = true;
      for (std::size_t i = 0; i < entries && gray; ++i) {
        const std::size_t e = start + i * palette_entry;
        gray = in.u8(e) == in.u8(e + 1) && in.u8(e + 1) == in.u8(e + 2);
      }
      if (gray) facts.channels = 1;
    }
  }
  if (whole && (compression == 0 || compression == 3) && bpp > 0 && bpp <= 32) {
    const std::uint64_t row_bytes = (static_cast<std::uint64_t>(facts.width) * bpp + 31) / 32 * 4;
    std::uint64_t needed = 0;
    if (__builtin_mul_overflow(row_bytes, static_cast<std::uint64_t>(facts.height), &needed) ||
        __builtin_add_overflow(needed, std::uint64_t{offset}, &needed) || needed > in.size()) {
      fail_truncated(path, kBmp, in.size(),
                     "before the end of its " + size_text(facts.width, facts.height) + " pixel array");
    }
  }
  return facts;
}

// ---------------------------------------------------------------------------------------------------------------
// PPM / PGM (PBM bitmaps are read as gray)

HeaderFacts parse_pnm(const std::string& path, const Bytes& in, bool whole, ImageFormat format,
                      const ImageReadOptions& options) {
  HeaderFacts facts;
  const std::uint32_t kind = in.u8(1) - '0';
  const bool bitmap = kind == 1 || kind == 4;
  std::size_t pos = 2;
  auto next_number = [&](const char* what) -> std::int64_t {
    for (;;) {
      if (!in.has(pos, 1))
        fail_truncated(path, format, in.size(), std::string("inside the header, before the ") + what);
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
      if (value > INT_MAX) fail_corrupt(path, format, std::string("the ") + what + " is too large");
      ++pos;
      ++digits;
    }
    if (digits == 0) fail_corrupt(path, format, std::string("the header has no ") + what);
    return value;
  };
  facts.width = next_number("width");
  facts.height = next_number("height");
  const std::int64_t maxval = bitmap ? 1 : next_number("maximum value");
  if (facts.width <= 0 || facts.height <= 0) {
    fail_corrupt(path, format, "the header gives size " + size_text(facts.width, facts.height));
  }
  if (maxval < 1 || maxval > 65535) {
    fail_corrupt(path, format, "maximum value " + std::to_string(maxval) + " is outside 1..65535");
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
      fail_truncated(path, format, in.size(),
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
      fail_truncated(path, format, in.size(),
                     "before the end of its " + size_text(facts.width, facts.height) + " plain-text pixel array");
    }
  }
  return facts;
}

// ---------------------------------------------------------------------------------------------------------------
// WebP

HeaderFacts parse_webp(const std::string& path, const Bytes& in, bool whole, const ImageReadOptions& options) {
  constexpr ImageFormat kWebp = ImageFormat::Webp;
  HeaderFacts facts;
  facts.bit_depth = 8;
  if (!in.has(12, 8)) fail_truncated(path, kWebp, in.size(), "inside the header");
  const std::size_t payload = 20;
  if (std::memcmp(in.at(12), "VP8 ", 4) == 0) {
    if (!in.has(payload, 10)) fail_truncated(path, kWebp, in.size(), "inside the header");
    if (in.u8(payload + 3) != 0x9d || in.u8(payload + 4) != 0x01 || in.u8(payload + 5) != 0x2a) {
      fail_corrupt(path, kWebp, "the VP8 frame has no start code");
    }
    facts.width = in.le16(payload + 6) & 0x3fff;
    facts.height = in.le16(payload + 8) & 0x3fff;
    facts.channels = 3;
  } else if (std::memcmp(in.at(12), "VP8L", 4) == 0) {
    if (!in.has(payload, 5)) fail_truncated(path, kWebp, in.size(), "inside the header");
    if (in.u8(payload) != 0x2f) fail_corrupt(path, kWebp, "the VP8L data has no signature");
    const std::uint32_t bits = in.le32(payload + 1);
    facts.width = (bits & 0x3fff) + 1;
    facts.height = ((bits >> 14) & 0x3fff) + 1;
    facts.channels = (bits >> 28) & 1 ? 4 : 3;
  } else if (std::memcmp(in.at(12), "VP8X", 4) == 0) {
    if (!in.has(payload, 10)) fail_truncated(path, kWebp, in.size(), "inside the header");
    const std::uint32_t flags = in.u8(payload);
    if (flags & 0x02) fail(ErrorCode::Format, path, "animated WebP is not supported; a still WebP image is allowed");
    facts.width = std::int64_t{in.le24(payload + 4)} + 1;
    facts.height = std::int64_t{in.le24(payload + 7)} + 1;
    facts.channels = flags & 0x10 ? 4 : 3;
  } else {
    fail_corrupt(path, kWebp, "the first chunk is not VP8, VP8L or VP8X");
  }
  if (facts.width <= 0 || facts.height <= 0) {
    fail_corrupt(path, kWebp, "the header gives size " + size_text(facts.width, facts.height));
  }
  check_pixel_limit(path, facts.width, facts.height, options);
  if (whole && std::uint64_t{in.le32(4)} + 8 > in.size()) {
    fail_truncated(path, kWebp, in.size(),
                   "before the end of its " + std::to_string(std::uint64_t{in.le32(4)} + 8) + "-byte RIFF container");
  }
  return facts;
}

// ---------------------------------------------------------------------------------------------------------------
// TIFF (size and orientation of the first image only; channels and depth come from decoding). Classic TIFF (magic
// 42: 4-byte offsets, 12-byte entries) and BigTIFF (magic 43: 8-byte offsets, 20-byte entries, sizes also as LONG8).

const char* tiff_tag_name(std::uint64_t tag) {
  switch (tag) {
    case 256: return "ImageWidth";
    case 257: return "ImageLength";
    case 278: return "RowsPerStrip";
    case 322: return "TileWidth";
    case 323: return "TileLength";
    default: return "a size tag";
  }
}

HeaderFacts parse_tiff(const std::string& path, const Bytes& in, const ImageReadOptions& options) {
  constexpr ImageFormat kTiff = ImageFormat::Tiff;
  HeaderFacts facts;
  if (!in.has(0, 16)) fail_truncated(path, kTiff, in.size(), "inside the header");
  const EndianReader r{in.at(0), in.u8(0) == 'I'};
  const bool big = r.get(2, 2) == 43;
  if (big && (r.get(4, 2) != 8 || r.get(6, 2) != 0)) {
    fail_corrupt(path, kTiff,
                 "the BigTIFF header gives offset size " + std::to_string(r.get(4, 2)) + " and reserved value " +
                     std::to_string(r.get(6, 2)) + " (8 and 0 are required)");
  }
  const int offset_size = big ? 8 : 4;
  const std::uint64_t ifd = big ? r.get(8, 8) : r.get(4, 4);
  const std::size_t count_size = big ? 8 : 2;
  const std::size_t entry_size = big ? 20 : 12;
  if (ifd < 8 || ifd > (std::uint64_t{1} << 40)) {
    fail_corrupt(path, kTiff, "the first image directory offset " + std::to_string(ifd) + " is invalid");
  }
  const auto dir = static_cast<std::size_t>(ifd);
  if (!in.has(dir, count_size)) fail_corrupt(path, kTiff, "the first image directory lies outside the file");
  const std::uint64_t count = r.get(dir, static_cast<int>(count_size));
  std::int64_t width = -1;
  std::int64_t height = -1;
  std::int64_t rows_per_strip = -1;
  std::int64_t tile_width = -1;
  std::int64_t tile_length = -1;
  constexpr std::uint64_t kMaxEntries = 4096;  // a real directory has a few dozen
  for (std::uint64_t i = 0; i < count && i < kMaxEntries; ++i) {
    const std::size_t e = dir + count_size + static_cast<std::size_t>(i) * entry_size;
    if (!in.has(e, entry_size)) fail_corrupt(path, kTiff, "the first image directory is cut short");
    const std::uint64_t tag = r.get(e, 2);
    const std::uint64_t type = r.get(e + 2, 2);
    const std::size_t value = e + 4 + static_cast<std::size_t>(offset_size);
    if (tag == 274) {
      // Orientation, one SHORT held in the entry. Values other than 1..8 are ignored, as JPEG's EXIF ones are.
      const std::uint64_t o = type == 3 && r.get(e + 4, offset_size) >= 1 ? r.get(value, 2) : 0;
      if (o >= 2 && o <= 8) {
        facts.orientation = static_cast<int>(o);
        facts.orientation_offset = value;
      }
      continue;
    }
    std::int64_t* field = tag == 256 ? &width
                          : tag == 257 ? &height
                          : tag == 278 ? &rows_per_strip
                          : tag == 322 ? &tile_width
                          : tag == 323 ? &tile_length
                                       : nullptr;
    if (field == nullptr) continue;
    std::int64_t v = -1;
    if (type == 3) v = static_cast<std::int64_t>(r.get(value, 2));  // SHORT
    if (type == 4) v = static_cast<std::int64_t>(r.get(value, 4));  // LONG
    if (type == 16 && big) {
      // LONG8, read whole: a BigTIFF writer may store any size this way, and the pixel limit must see the real
      // size. libtiff keeps these fields in 32 bits, so a larger value is no TIFF it can read.
      const std::uint64_t long8 = r.get(value, 8);
      if (long8 > 0xffffffffULL) {
        fail_corrupt(path, kTiff,
                     std::string(tiff_tag_name(tag)) + " " + std::to_string(long8) +
                         " is larger than 4294967295, the most a TIFF reader allows");
      }
      v = static_cast<std::int64_t>(long8);
    }
    *field = v;
  }
  if (width <= 0 || height <= 0) {
    fail_corrupt(path, kTiff, "the first image directory has no valid ImageWidth and ImageLength");
  }
  // The decoder allocates a whole strip (RowsPerStrip rows, taken as written) or a whole tile: a strip taller than
  // the image (other than the 2^32 - 1 "one strip" value) or a huge tile would make a small file allocate gigabytes.
  if (rows_per_strip > height && rows_per_strip != 0xffffffffLL) {
    fail_corrupt(path, kTiff,
                 "RowsPerStrip " + std::to_string(rows_per_strip) + " is larger than the image height " +
                     std::to_string(height) + "; at most the height (or 4294967295 for one strip) is allowed");
  }
  if (tile_width > 0 || tile_length > 0) check_pixel_limit(path, tile_width, tile_length, options);
  facts.width = width;
  facts.height = height;
  check_pixel_limit(path, facts.width, facts.height, options);
  return facts;
}

}  // namespace

HeaderFacts parse_header(const std::string& path, const FileBytes& bytes, ImageFormat format, bool whole,
                         const ImageReadOptions& options) {
  const Bytes in(bytes);
  switch (format) {
    case ImageFormat::Jpeg: return parse_jpeg(path, in, whole, options);
    case ImageFormat::Bmp: return parse_bmp(path, in, whole, options);
    case ImageFormat::Ppm:
    case ImageFormat::Pgm: return parse_pnm(path, in, whole, format, options);
    case ImageFormat::Webp: return parse_webp(path, in, whole, options);
    case ImageFormat::Tiff: return parse_tiff(path, in, options);
    case ImageFormat::Png:
    case ImageFormat::Unknown: break;
  }
  throw InternalError("rsz::io: parse_header called for PNG or an unknown format");
}

// ---------------------------------------------------------------------------------------------------------------
// Encoding

// What each format can hold; empty when `image` fits, else the complaint.
std::string unfit_reason(const Image& image, ImageFormat format) {
  const std::string name = display_name(format);
  const std::string has = "the image has " + channels_text(image.channels);
  const char* keep16 = "PNG (.png), TIFF (.tif/.tiff) and PPM/PGM (.ppm/.pgm) keep 16 bits";
  const bool eight_bit_only = format == ImageFormat::Jpeg || format == ImageFormat::Bmp || format == ImageFormat::Webp;
  if (eight_bit_only && image.bit_depth == 16) {
    return name + " cannot hold 16-bit samples (the image is 16-bit); " + keep16 + ", or convert the image to 8 bits";
  }
  if (image.channels == 2) {
    return name + " cannot hold gray + alpha (2 channels); only PNG (.png) can";
  }
  switch (format) {
    case ImageFormat::Jpeg:
      if (image.channels == 4) {
        return "JPEG cannot hold an alpha channel (" + has +
               "); 1 (gray) or 3 (RGB) channels are allowed: write .png, .tif/.tiff or .webp to keep alpha";
      }
      if (image.width > 65500 || image.height > 65500) {
        return "JPEG cannot hold " + size_text(image.width, image.height) + " pixels; at most 65500 a side is allowed";
      }
      break;
    case ImageFormat::Bmp:
      if (image.channels == 4) {
        return "BMP cannot hold an alpha channel here (" + has +
               "); 1 (gray) or 3 (RGB) channels are allowed: write .png, .tif/.tiff or .webp to keep alpha";
      }
      break;
    case ImageFormat::Webp:
      if (image.width > 16383 || image.height > 16383) {
        return "WebP cannot hold " + size_text(image.width, image.height) + " pixels; at most 16383 a side is allowed";
      }
      break;
    case ImageFormat::Ppm:
      if (image.channels != 3) {
        return "PPM holds RGB (3 channels) only (" + has + "); write gray as .pgm and alpha as .png or .tif/.tiff";
      }
      break;
    case ImageFormat::Pgm:
      if (image.channels != 1) {
        return "PGM holds gray (1 channel) only (" + has + "); write RGB as .ppm and alpha as .png or .tif/.tiff";
      }
      break;
    default: break;
  }
  if (image.width > INT_MAX || image.height > INT_MAX) {
    return name + " through OpenCV cannot hold " + size_text(image.width, image.height) +
           " pixels; at most 2147483647 a side is allowed";
  }
  return {};
}

Orientation::Orientation(int orientation, std::int64_t w, std::int64_t h) {
  const bool transpose = orientation >= 5;
  out_width = transpose ? h : w;
  out_height = transpose ? w : h;
  switch (orientation) {
    case 2: x0 = w - 1, xx = -1; break;                                       // mirrored left-right
    case 3: x0 = w - 1, xx = -1, y0 = h - 1, yy = -1; break;                  // turned 180 degrees
    case 4: y0 = h - 1, yy = -1; break;                                       // mirrored top-bottom
    case 5: xx = 0, xy = 1, yx = 1, yy = 0; break;                            // transposed
    case 6: x0 = h - 1, xx = 0, xy = -1, yx = 1, yy = 0; break;               // turn 90 degrees clockwise
    case 7: x0 = h - 1, xx = 0, xy = -1, y0 = w - 1, yx = -1, yy = 0; break;  // transverse
    case 8: xx = 0, xy = 1, y0 = w - 1, yx = -1, yy = 0; break;               // turn 90 degrees anticlockwise
    default: break;
  }
}

}  // namespace rsz::io::detail
