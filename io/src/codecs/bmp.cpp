// BMP: the codec entry, the signature and the header probe. Pixels go through OpenCV imgcodecs (image_opencv.cpp).
//
// The probe reads the size, bit count and compression of uncompressed, bit-field and RLE files, and (with `whole`)
// refuses an uncompressed or bit-field file that does not hold the whole pixel array its header announces.

#include "codecs/header_reader.h"

namespace rsz::io::detail {
namespace {

bool sniff_bmp(const std::uint8_t* data, std::size_t size) { return starts_with(data, size, "BM", 2) && size >= 18; }

HeaderFacts probe_bmp(const Codec& codec, const std::string& path, const FileBytes& bytes, bool whole,
                      const ImageReadOptions& options) {
  const Bytes in(bytes);
  HeaderFacts facts;
  if (!in.has(0, 18)) fail_truncated(path, codec, in.size(), "inside the header");
  const std::uint32_t offset = in.le32(10);
  const std::uint32_t dib = in.le32(14);
  std::uint32_t bpp = 0;
  std::uint32_t compression = 0;
  std::uint32_t colours_used = 0;
  std::size_t palette_entry = 4;
  if (dib == 12) {
    if (!in.has(14, 12)) fail_truncated(path, codec, in.size(), "inside the header");
    facts.width = in.le16(18);
    facts.height = in.le16(20);
    bpp = in.le16(24);
    palette_entry = 3;
  } else if (dib >= 40 && dib <= 1024) {
    if (!in.has(14, 40)) fail_truncated(path, codec, in.size(), "inside the header");
    facts.width = static_cast<std::int32_t>(in.le32(18));
    facts.height = static_cast<std::int32_t>(in.le32(22));
    if (facts.height < 0) facts.height = -facts.height;  // top-down rows
    bpp = in.le16(28);
    compression = in.le32(30);
    colours_used = in.le32(46);
  } else {
    fail_corrupt(path, codec, "header size " + std::to_string(dib) + " is not supported (12 or 40 to 1024 is)");
  }
  if (facts.width <= 0 || facts.height <= 0) {
    fail_corrupt(path, codec, "the header gives size " + size_text(facts.width, facts.height));
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
      fail_truncated(path, codec, in.size(),
                     "before the end of its " + size_text(facts.width, facts.height) + " pixel array");
    }
  }
  return facts;
}

std::vector<std::uint8_t> encode_bmp(const Codec& codec, const std::string& path, const Image& image,
                                     const ImageWriteOptions&) {
  return encode_opencv(codec, path, image, {});
}

}  // namespace

Codec bmp_codec() {
  Codec c = opencv_codec();
  c.format = ImageFormat::Bmp;
  c.name = "bmp";
  c.display_name = "BMP";
  c.family = "BMP";
  c.extensions = {".bmp", nullptr};
  c.sniff = sniff_bmp;
  c.probe = probe_bmp;
  c.encode = encode_bmp;
  c.depths = kWrites8;
  c.channels = kGray | kRgb;
  c.channels_refusal = "cannot hold an alpha channel here";  // OpenCV writes no alpha to BMP
  c.module_ext = ".bmp";
  return c;
}

}  // namespace rsz::io::detail
