// GIF (read only): the codec entry, the signature, the header probe and the decoder (giflib). The first frame is the
// image, placed on the logical screen: its transparent colour (the Graphic Control Extension before it) and any part
// of the screen it does not cover become alpha 0, so such a GIF reads as RGBA and the others as RGB. Later frames are
// not decoded; the probe says whether there are any (ImageInfo::animated), and the command line says so once a run.
//
// The probe walks the blocks as far as the second frame's descriptor (or the trailer) without decoding anything: the
// screen's size and the first frame's (both held to max_pixels before any pixel buffer exists), its transparency and
// whether it covers the screen.
#include <gif_lib.h>

#include <algorithm>
#include <cstdio>
#include <memory>

#include "codecs/header_reader.h"
#include "file_util.h"

namespace rsz::io::detail {
namespace {

bool sniff_gif(const std::uint8_t* data, std::size_t size) {
  return starts_with(data, size, "GIF87a", 6) || starts_with(data, size, "GIF89a", 6);
}

// The bytes of a colour table of the size its packed field gives (bit 7 set: there is one).
std::size_t color_table_bytes(std::uint32_t packed) { return (packed & 0x80) ? 3 * (std::size_t{2} << (packed & 7)) : 0; }

// Skips data sub-blocks (a length byte, then that many bytes, up to a length of 0) from `pos`; false when the file
// ends first.
bool skip_sub_blocks(const Bytes& in, std::size_t& pos) {
  for (;;) {
    if (!in.has(pos, 1)) return false;
    const std::size_t length = in.u8(pos);
    pos += 1 + length;
    if (length == 0) return true;
  }
}

HeaderFacts probe_gif(const Codec& codec, const std::string& path, const FileBytes& bytes, bool whole,
                      const ImageReadOptions& options) {
  const Bytes in(bytes);
  if (!in.has(0, 13)) fail_truncated(path, codec, in.size(), "inside the header");
  HeaderFacts facts;
  facts.width = in.le16(6);
  facts.height = in.le16(8);
  facts.bit_depth = 8;
  if (facts.width == 0 || facts.height == 0) {
    fail_corrupt(path, codec, "the header gives size " + size_text(facts.width, facts.height));
  }
  check_pixel_limit(path, facts.width, facts.height, options);
  std::size_t pos = 13 + color_table_bytes(in.u8(10));
  bool transparent = false;  // the Graphic Control Extension before the first frame names a transparent colour
  int frames = 0;
  bool covers = false;
  while (frames < 2) {
    if (!in.has(pos, 1)) {
      if (frames == 0) fail_truncated(path, codec, in.size(), "before its first image");
      break;  // the first frame is whole; what follows it is not read
    }
    const std::uint32_t block = in.u8(pos);
    if (block == 0x3B) {  // the trailer
      if (frames == 0) fail_corrupt(path, codec, "it holds no image");
      break;
    }
    if (block == 0x21) {       // an extension: its label, then sub-blocks
      if (!in.has(pos, 2)) fail_truncated(path, codec, in.size(), "inside an extension");
      const std::uint32_t label = in.u8(pos + 1);
      pos += 2;
      if (label == 0xF9 && frames == 0 && in.has(pos, 2) && in.u8(pos) >= 4) transparent = (in.u8(pos + 1) & 1) != 0;
      if (!skip_sub_blocks(in, pos)) fail_truncated(path, codec, in.size(), "inside an extension");
      continue;
    }
    if (block != 0x2C) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02x", static_cast<unsigned>(block));
      fail_corrupt(path, codec, std::string("a block of unknown type ") + hex + " at byte " + std::to_string(pos));
    }
    ++frames;
    if (frames == 2) break;  // an animation: the first frame is the image
    if (!in.has(pos, 11)) fail_truncated(path, codec, in.size(), "inside the first image's descriptor");
    const std::int64_t left = in.le16(pos + 1);
    const std::int64_t top = in.le16(pos + 3);
    const std::int64_t width = in.le16(pos + 5);
    const std::int64_t height = in.le16(pos + 7);
    if (width == 0 || height == 0) fail_corrupt(path, codec, "the first image has size " + size_text(width, height));
    check_pixel_limit(path, width, height, options);  // its rows are decoded whole, even where they leave the screen
    covers = left == 0 && top == 0 && width >= facts.width && height >= facts.height;
    pos += 10 + color_table_bytes(in.u8(pos + 9)) + 1;  // the descriptor, a local colour table, the LZW code size
    if (!skip_sub_blocks(in, pos)) {
      if (whole) fail_truncated(path, codec, in.size(), "inside the first image's data");
      break;
    }
  }
  facts.channels = transparent || !covers ? 4 : 3;
  facts.animated = frames == 2;
  return facts;
}

// giflib reads from memory through this.
struct MemoryReader {
  const std::uint8_t* data;
  std::size_t size;
  std::size_t pos = 0;
};

int read_memory(GifFileType* gif, GifByteType* out, int count) {
  auto* reader = static_cast<MemoryReader*>(gif->UserData);
  const std::size_t n = std::min<std::size_t>(static_cast<std::size_t>(std::max(count, 0)), reader->size - reader->pos);
  std::copy_n(reader->data + reader->pos, n, out);
  reader->pos += n;
  return static_cast<int>(n);
}

struct GifCloser {
  void operator()(GifFileType* gif) const {
    int error = 0;
    DGifCloseFile(gif, &error);
  }
};

[[noreturn]] void fail_gif(const std::string& path, const Codec& codec, int error) {
  const char* text = GifErrorString(error);
  fail_corrupt(path, codec, text != nullptr ? text : "giflib error " + std::to_string(error));
}

// The first frame's rows, in the order giflib hands them out: interlaced images in four passes.
std::vector<std::int64_t> row_order(std::int64_t height, bool interlaced) {
  std::vector<std::int64_t> rows;
  rows.reserve(static_cast<std::size_t>(height));
  if (!interlaced) {
    for (std::int64_t y = 0; y < height; ++y) rows.push_back(y);
    return rows;
  }
  static const std::int64_t kStart[] = {0, 4, 2, 1};
  static const std::int64_t kStep[] = {8, 8, 4, 2};
  for (int pass = 0; pass < 4; ++pass) {
    for (std::int64_t y = kStart[pass]; y < height; y += kStep[pass]) rows.push_back(y);
  }
  return rows;
}

Image read_gif(const Codec& codec, const std::string& path, const FileBytes& bytes, const ImageReadOptions& options) {
  const HeaderFacts facts = codec.probe(codec, path, bytes, /*whole=*/true, options);
  MemoryReader reader{bytes.data, bytes.size};
  int error = 0;
  const std::unique_ptr<GifFileType, GifCloser> gif(DGifOpen(&reader, read_memory, &error));
  if (!gif) fail_gif(path, codec, error);
  Image image;
  image.width = facts.width;
  image.height = facts.height;
  image.channels = facts.channels;
  image.bit_depth = 8;
  try {
    image.data8.assign(static_cast<std::size_t>(facts.width * facts.height * facts.channels), 0);  // alpha 0
  } catch (const std::bad_alloc&) {
    fail(ErrorCode::Io, path, "cannot read: out of memory for a " + size_text(facts.width, facts.height) + " image");
  }
  int transparent_index = -1;
  for (;;) {
    GifRecordType type = UNDEFINED_RECORD_TYPE;
    if (DGifGetRecordType(gif.get(), &type) == GIF_ERROR) fail_gif(path, codec, gif->Error);
    if (type == TERMINATE_RECORD_TYPE) fail_corrupt(path, codec, "it holds no image");
    if (type == EXTENSION_RECORD_TYPE) {
      int code = 0;
      GifByteType* block = nullptr;
      if (DGifGetExtension(gif.get(), &code, &block) == GIF_ERROR) fail_gif(path, codec, gif->Error);
      // The Graphic Control Extension read as the probe reads it (a block of 4 bytes or more: packed fields, delay,
      // the transparent index), so that the channels it announced and the pixels agree.
      if (code == GRAPHICS_EXT_FUNC_CODE && block != nullptr && block[0] >= 4) {
        transparent_index = (block[1] & 1) != 0 ? block[4] : -1;
      }
      while (block != nullptr) {
        if (DGifGetExtensionNext(gif.get(), &block) == GIF_ERROR) fail_gif(path, codec, gif->Error);
      }
      continue;
    }
    if (type != IMAGE_DESC_RECORD_TYPE) continue;
    if (DGifGetImageDesc(gif.get()) == GIF_ERROR) fail_gif(path, codec, gif->Error);
    const GifImageDesc& frame = gif->Image;
    const ColorMapObject* colors = frame.ColorMap != nullptr ? frame.ColorMap : gif->SColorMap;
    if (colors == nullptr) fail_corrupt(path, codec, "the first image has no colour table");
    std::vector<GifPixelType> line(static_cast<std::size_t>(frame.Width));
    const int c = image.channels;
    for (const std::int64_t row : row_order(frame.Height, frame.Interlace)) {
      if (DGifGetLine(gif.get(), line.data(), frame.Width) == GIF_ERROR) fail_gif(path, codec, gif->Error);
      const std::int64_t y = frame.Top + row;
      if (y >= image.height) continue;
      std::uint8_t* out = image.data8.data() + static_cast<std::size_t>(y * image.width * c);
      for (std::int64_t x = 0; x < frame.Width && frame.Left + x < image.width; ++x) {
        const int index = line[static_cast<std::size_t>(x)];
        if (c == 4 && index == transparent_index) continue;  // alpha stays 0
        // An index past the table (a damaged file) is black, as browsers show it.
        const GifColorType colour = index < colors->ColorCount ? colors->Colors[index] : GifColorType{0, 0, 0};
        std::uint8_t* px = out + static_cast<std::size_t>((frame.Left + x) * c);
        px[0] = colour.Red;
        px[1] = colour.Green;
        px[2] = colour.Blue;
        if (c == 4) px[3] = 255;
      }
    }
    return image;
  }
}

}  // namespace

Codec gif_codec() {
  Codec c;
  c.format = ImageFormat::Gif;
  c.name = "gif";
  c.display_name = "GIF";
  c.family = "GIF";
  c.read_only_extensions = {".gif"};
  c.sniff = sniff_gif;
  c.probe = probe_gif;
  c.info = info_from_header;
  c.decode = read_gif;
  return c;
}

}  // namespace rsz::io::detail
