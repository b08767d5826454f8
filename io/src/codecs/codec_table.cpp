// The codec table, its lookups, and what is derived from it: the lists of formats and extensions that messages name,
// and the checks of what each format can hold.
#include <algorithm>
#include <climits>
#include <cctype>
#include <filesystem>

#include "codecs/codec.h"
#include "rsz/io/naming.h"

namespace rsz::io::detail {
namespace {

// "a", "a or b", "a, b or c" (`conjunction` "or"; likewise "and").
std::string join(const std::vector<std::string>& items, const char* conjunction) {
  std::string text;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) text += i + 1 == items.size() ? std::string(" ") + conjunction + " " : ", ";
    text += items[i];
  }
  return text;
}

// A codec's extensions: ".tif/.tiff".
std::string extensions_text(const Codec& codec) {
  std::string text;
  for (const char* ext : codec.extensions) {
    if (ext != nullptr) text += (text.empty() ? "" : "/") + std::string(ext);
  }
  return text;
}

// The families of the codecs that `has`, each with the extensions of those members: "PNG (.png), TIFF (.tif/.tiff)
// and PPM/PGM (.ppm/.pgm)" (`with_extensions`), or "PNG, TIFF and PPM/PGM".
template <typename Has>
std::vector<std::string> families(Has has, bool with_extensions) {
  std::vector<std::string> names;
  std::vector<std::string> exts;
  for (const Codec& codec : codecs()) {
    if (!has(codec)) continue;
    const auto at = std::find(names.begin(), names.end(), codec.family) - names.begin();
    if (static_cast<std::size_t>(at) == names.size()) {
      names.emplace_back(codec.family);
      exts.push_back(extensions_text(codec));
    } else {
      exts[static_cast<std::size_t>(at)] += "/" + extensions_text(codec);
    }
  }
  if (with_extensions) {
    for (std::size_t i = 0; i < names.size(); ++i) names[i] += " (" + exts[i] + ")";
  }
  return names;
}

std::string channels_text(int channels) {
  switch (channels) {
    case 1: return "1 channel (gray)";
    case 2: return "2 channels (gray + alpha)";
    case 3: return "3 channels (RGB)";
    case 4: return "4 channels (RGBA)";
    default: return std::to_string(channels) + " channels";
  }
}

// "1 (gray) or 3 (RGB) channels are allowed: write .png, .tif/.tiff or .webp to keep alpha".
std::string channels_advice(const Codec& codec) {
  static const char* const kLayouts[] = {"", "1 (gray)", "2 (gray + alpha)", "3 (RGB)", "4 (RGBA)"};
  std::vector<std::string> allowed;
  for (int c = 1; c <= 4; ++c) {
    if (codec.writes_channels(c)) allowed.emplace_back(kLayouts[c]);
  }
  std::vector<std::string> alpha;
  for (const Codec& other : codecs()) {
    if (other.writes_channels(4)) alpha.push_back(extensions_text(other));
  }
  return join(allowed, "or") + " channels are allowed: write " + join(alpha, "or") + " to keep alpha";
}

}  // namespace

const std::array<Codec, kCodecCount>& codecs() {
  static const std::array<Codec, kCodecCount> table = {png_codec(), jpeg_codec(), bmp_codec(), tiff_codec(),
                                                       webp_codec(), ppm_codec(), pgm_codec(), gif_codec(),
                                                       heic_codec(), avif_codec(), jxl_codec()};
  return table;
}

const Codec& codec_for(ImageFormat format) {
  const Codec& codec = codecs()[static_cast<std::size_t>(format)];
  RSZ_ASSERT(codec.format == format);
  return codec;
}

const Codec* codec_for_extension(const std::string& path, bool read_only_too) {
  const std::string ext = lower_extension(path);
  if (ext.empty()) return nullptr;
  for (const Codec& codec : codecs()) {
    if (!codec.writable()) continue;
    for (const char* e : codec.extensions) {
      if (e != nullptr && ext == e) return &codec;
    }
  }
  if (read_only_too) {
    for (const Codec& codec : codecs()) {
      for (const char* e : codec.read_only_extensions) {
        if (e != nullptr && ext == e) return &codec;
      }
    }
  }
  return nullptr;
}

const Codec* sniff_codec(const std::uint8_t* data, std::size_t size) {
  for (const Codec& codec : codecs()) {
    if (codec.sniff(data, size)) return &codec;
  }
  return nullptr;
}

const std::string& readable_formats_list() {
  static const std::string text = join(families([](const Codec&) { return true; }, false), "or");
  return text;
}

const std::string& readable_formats_text() {
  static const std::string text = join(families([](const Codec&) { return true; }, false), "and") + " are allowed";
  return text;
}

const std::string& writable_extensions_text() {
  static const std::string text = join(writable_image_extensions(), "and") + " are allowed";
  return text;
}

std::string write_problem(const Codec& codec, const Image& image) {
  const std::string name = codec.display_name;
  if (image.bit_depth == 16 && !codec.writes_depth(16)) {
    return name + " cannot hold 16-bit samples (the image is 16-bit); " +
           join(families([](const Codec& c) { return c.writable() && c.writes_depth(16); }, true), "and") +
           " keep 16 bits, or convert the image to 8 bits";
  }
  if (image.channels == 2 && !codec.writes_channels(2)) {
    return name + " cannot hold gray + alpha (2 channels); only " +
           join(families([](const Codec& c) { return c.writable() && c.writes_channels(2); }, true), "and") + " can";
  }
  // A count outside 1..4 is check_image's to refuse; a format of one layout only (PPM, PGM) names it for any other.
  const bool one_layout = (codec.channels & (codec.channels - 1)) == 0;
  if (image.channels >= 1 && image.channels <= 4 ? !codec.writes_channels(image.channels) : one_layout) {
    return name + " " + codec.channels_refusal + " (the image has " + channels_text(image.channels) + "); " +
           (codec.channels_advice != nullptr ? std::string(codec.channels_advice) : channels_advice(codec));
  }
  if (codec.max_side > 0 && (image.width > codec.max_side || image.height > codec.max_side)) {
    return name + codec.max_side_reason + " cannot hold " + size_text(image.width, image.height) +
           " pixels; at most " + std::to_string(codec.max_side) + " a side is allowed";
  }
  return {};
}

Codec opencv_codec() {
  Codec c;
  c.decoded_facts = decoded_facts;
  c.info = info_from_header;
  c.decode = read_opencv;
  c.max_side = INT_MAX;  // OpenCV's int sizes
  c.max_side_reason = " through OpenCV";
  return c;
}

}  // namespace rsz::io::detail
