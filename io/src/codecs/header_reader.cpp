// The complaints of the header probes and codecs, and the EXIF orientation tag's place in a TIFF structure (shared
// by the JPEG probe, the JPEG reader and the PNG reader).
#include "codecs/header_reader.h"

namespace rsz::io::detail {

void fail_truncated(const std::string& path, const Codec& codec, std::size_t size, const std::string& before) {
  fail(ErrorCode::Format, path,
       std::string("the ") + codec.display_name + " file is truncated: it ends after " + std::to_string(size) +
           " bytes, " + before + "; a complete " + codec.display_name + " file is required");
}

void fail_corrupt(const std::string& path, const Codec& codec, const std::string& what) {
  fail(ErrorCode::Format, path,
       std::string("not a valid ") + codec.display_name + " file: " + what + "; a valid " + codec.display_name +
           " file is required");
}

void reset_exif_orientation(std::string& exif) {
  const std::size_t at = exif_orientation_offset(reinterpret_cast<const std::uint8_t*>(exif.data()), exif.size());
  if (at == kNoOrientation) return;
  const bool little = exif[0] == 'I';
  exif[at] = static_cast<char>(little ? 1 : 0);
  exif[at + 1] = static_cast<char>(little ? 0 : 1);
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

}  // namespace rsz::io::detail
