// TIFF: the codec entry, the signature and the header probe. Pixels go through OpenCV imgcodecs (libtiff) and the
// ICC profile and XMP tags through libtiff, both in rsz's OpenCV module (image_opencv.cpp).
//
// The probe reads the size and orientation of the first image only; channels and depth come from decoding.
// Classic TIFF (magic 42: 4-byte offsets, 12-byte entries) and BigTIFF (magic 43: 8-byte offsets, 20-byte entries,
// sizes also as LONG8). Truncation is left to libtiff.

#include "codecs/header_reader.h"

namespace rsz::io::detail {
namespace {

bool sniff_tiff(const std::uint8_t* data, std::size_t size) {
  return starts_with(data, size, "II\x2a\x00", 4) || starts_with(data, size, "MM\x00\x2a", 4) ||
         starts_with(data, size, "II\x2b\x00", 4) || starts_with(data, size, "MM\x00\x2b", 4);
}

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

HeaderFacts probe_tiff(const Codec& codec, const std::string& path, const FileBytes& bytes, bool /*whole*/,
                       const ImageReadOptions& options) {
  const Bytes in(bytes);
  HeaderFacts facts;
  if (!in.has(0, 16)) fail_truncated(path, codec, in.size(), "inside the header");
  const EndianReader r{in.at(0), in.u8(0) == 'I'};
  const bool big = r.get(2, 2) == 43;
  if (big && (r.get(4, 2) != 8 || r.get(6, 2) != 0)) {
    fail_corrupt(path, codec,
                 "the BigTIFF header gives offset size " + std::to_string(r.get(4, 2)) + " and reserved value " +
                     std::to_string(r.get(6, 2)) + " (8 and 0 are required)");
  }
  const int offset_size = big ? 8 : 4;
  const std::uint64_t ifd = big ? r.get(8, 8) : r.get(4, 4);
  const std::size_t count_size = big ? 8 : 2;
  const std::size_t entry_size = big ? 20 : 12;
  if (ifd < 8 || ifd > (std::uint64_t{1} << 40)) {
    fail_corrupt(path, codec, "the first image directory offset " + std::to_string(ifd) + " is invalid");
  }
  const auto dir = static_cast<std::size_t>(ifd);
  if (!in.has(dir, count_size)) fail_corrupt(path, codec, "the first image directory lies outside the file");
  const std::uint64_t count = r.get(dir, static_cast<int>(count_size));
  std::int64_t width = -1;
  std::int64_t height = -1;
  std::int64_t rows_per_strip = -1;
  std::int64_t tile_width = -1;
  std::int64_t tile_length = -1;
  constexpr std::uint64_t kMaxEntries = 4096;  // a real directory has a few dozen
  for (std::uint64_t i = 0; i < count && i < kMaxEntries; ++i) {
    const std::size_t e = dir + count_size + static_cast<std::size_t>(i) * entry_size;
    if (!in.has(e, entry_size)) fail_corrupt(path, codec, "the first image directory is cut short");
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
        fail_corrupt(path, codec,
                     std::string(tiff_tag_name(tag)) + " " + std::to_string(long8) +
                         " is larger than 4294967295, the most a TIFF reader allows");
      }
      v = static_cast<std::int64_t>(long8);
    }
    *field = v;
  }
  if (width <= 0 || height <= 0) {
    fail_corrupt(path, codec, "the first image directory has no valid ImageWidth and ImageLength");
  }
  // The decoder allocates a whole strip (RowsPerStrip rows, taken as written) or a whole tile: a strip taller than
  // the image (other than the 2^32 - 1 "one strip" value) or a huge tile would make a small file allocate gigabytes.
  if (rows_per_strip > height && rows_per_strip != 0xffffffffLL) {
    fail_corrupt(path, codec,
                 "RowsPerStrip " + std::to_string(rows_per_strip) + " is larger than the image height " +
                     std::to_string(height) + "; at most the height (or 4294967295 for one strip) is allowed");
  }
  if (tile_width > 0 || tile_length > 0) check_pixel_limit(path, tile_width, tile_length, options);
  facts.width = width;
  facts.height = height;
  check_pixel_limit(path, facts.width, facts.height, options);
  return facts;
}

std::vector<std::uint8_t> encode_tiff(const Codec& codec, const std::string& path, const Image& image,
                                      const ImageWriteOptions&) {
  return encode_opencv(codec, path, image, {});
}

}  // namespace

Codec tiff_codec() {
  Codec c = opencv_codec();
  c.format = ImageFormat::Tiff;
  c.name = "tiff";
  c.display_name = "TIFF";
  c.family = "TIFF";
  c.extensions = {".tif", ".tiff"};
  c.sniff = sniff_tiff;
  c.probe = probe_tiff;
  c.metadata_read = kIcc | kXmp;  // the ICC profile and XMP tags of the first directory
  c.encode = encode_tiff;
  c.depths = kWrites8 | kWrites16;
  c.channels = kGray | kRgb | kRgba;
  c.metadata_written = kIcc | kXmp;  // TIFF's EXIF is a directory of its own, not a blob: not written
  c.module_ext = ".tiff";
  return c;
}

}  // namespace rsz::io::detail
