// PNG: the codec entry and the signature. libpng reads the header itself (read_png_info in image_png.cpp), so PNG
// has no probe of its own; it holds every layout rsz makes (1 to 4 channels, 8 or 16 bits).
#include "codecs/header_reader.h"

namespace rsz::io::detail {
namespace {

bool sniff_png(const std::uint8_t* data, std::size_t size) { return starts_with(data, size, "\x89PNG\r\n\x1a\n", 8); }

}  // namespace

Codec png_codec() {
  Codec c;
  c.format = ImageFormat::Png;
  c.name = "png";
  c.display_name = "PNG";
  c.family = "PNG";
  c.extensions = {".png", nullptr};
  c.sniff = sniff_png;
  c.stream_info = read_png_info;
  c.stream_decode = read_png;
  c.open_rows = open_png_rows;
  c.metadata_read = kIcc | kExif | kXmp;  // iCCP, eXIf, the XMP iTXt chunk
  c.encode_rows = encode_png;
  c.depths = kWrites8 | kWrites16;
  c.channels = kGray | kGrayAlpha | kRgb | kRgba;
  // No side limit here: encode_png refuses sides over PNG's 2^31 - 1, which no image rsz makes reaches.
  c.metadata_written = kIcc | kExif | kXmp;  // iCCP, eXIf, XMP as an iTXt chunk
  return c;
}

}  // namespace rsz::io::detail
