// HEIF (HEIC, read) and AVIF (read and written): the codec entries, their signatures (the ftyp box's brands) and
// libheif's decoder and AV1 encoder, which rsz::io loads with dlopen the first time such a file is read or written
// (libheif pulls in the HEVC and AV1 codecs: a program that never meets one never loads them). The image is the file's primary image, with the transformations
// of the file applied by libheif (irot rotation, imir mirroring, clap cropping), grid images assembled, and alpha
// where the file has an alpha plane; samples of more than 8 bits (10, 12) become 16-bit samples (v * 65535 / max,
// rounded). The ICC profile ("prof" / "rICC" colour box), the EXIF block (its orientation tag set to 1: the
// pixels are upright) and the XMP packet are kept.
//
// The probe asks libheif to read the file's boxes (nothing decoded) for the primary image's size, alpha and bit depth,
// so that --max-pixels and the memory budget refuse a bomb (a grid of many tiles included) before any pixel buffer
// exists.
#include <libheif/heif.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <map>
#include <memory>
#include <vector>

#include "codecs/header_reader.h"
#include "file_util.h"
#include "rsz/io/colour.h"

namespace rsz::io::detail {
namespace {

// The brands of an ISO base media file's leading ftyp box (the major brand, then the compatible ones).
std::vector<std::string> ftyp_brands(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> brands;
  if (size < 16 || std::memcmp(data + 4, "ftyp", 4) != 0) return brands;
  const std::size_t box = (std::size_t{data[0]} << 24) | (std::size_t{data[1]} << 16) | (std::size_t{data[2]} << 8) | data[3];
  const std::size_t end = std::min(size, std::min<std::size_t>(box, 16 + 4 * 64));
  brands.emplace_back(reinterpret_cast<const char*>(data + 8), 4);
  for (std::size_t at = 16; at + 4 <= end; at += 4) brands.emplace_back(reinterpret_cast<const char*>(data + at), 4);
  return brands;
}

bool has_brand(const std::vector<std::string>& brands, std::initializer_list<const char*> wanted) {
  for (const std::string& b : brands) {
    for (const char* w : wanted) {
      if (b == w) return true;
    }
  }
  return false;
}

bool sniff_avif(const std::uint8_t* data, std::size_t size) {
  return has_brand(ftyp_brands(data, size), {"avif", "avis"});
}

bool sniff_heic(const std::uint8_t* data, std::size_t size) {
  const std::vector<std::string> brands = ftyp_brands(data, size);
  return !has_brand(brands, {"avif", "avis"}) &&
         has_brand(brands, {"heic", "heix", "heim", "heis", "hevc", "hevx", "hevm", "hevs", "mif1", "msf1"});
}

// ---- item references: libheif 1.15 decodes a grid's tiles and an image's alpha or depth image by following them,
// without noticing a cycle (a grid among its own tiles recurses until the stack or, a thread a level, the memory
// runs out: found by fuzzing). The file's iref boxes are read here first, and a cycle, or a chain deeper than any
// real file has, is refused before libheif decodes anything. A file whose boxes do not parse is left to libheif.

// An ISO BMFF box at `at` within [at, limit): its type, body and end; false where it does not fit.
struct Box {
  std::uint32_t type = 0;
  std::size_t body = 0;
  std::size_t end = 0;
};

bool box_at(const std::uint8_t* data, std::size_t at, std::size_t limit, Box& box) {
  if (at > limit || limit - at < 8) return false;
  const EndianReader big_endian{data, false};
  std::uint64_t size = big_endian.get(at, 4);
  std::size_t header = 8;
  if (size == 1) {
    if (limit - at < 16) return false;
    size = big_endian.get(at + 8, 8);
    header = 16;
  } else if (size == 0) {
    size = limit - at;
  }
  if (size < header || size > limit - at) return false;
  box = {static_cast<std::uint32_t>(big_endian.get(at + 4, 4)), at + header, at + static_cast<std::size_t>(size)};
  return true;
}

constexpr std::uint32_t fourcc(const char (&c)[5]) {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v = (v << 8) | static_cast<unsigned char>(c[i]);
  return v;
}

// The items decoding an item also decodes: its 'dimg' references (a grid's or overlay's tiles) and the items that
// are its 'auxl' images (alpha, depth), from every iref box of the top-level meta box. The references are read as
// libheif reads them: one after another, each header's size ignored (a reference whose size claims more or fewer
// bytes than its items take is read by libheif all the same, so a cycle can hide behind a wrong size: found by
// fuzzing).
std::map<std::uint32_t, std::vector<std::uint32_t>> decoded_with(const std::uint8_t* data, std::size_t size) {
  std::map<std::uint32_t, std::vector<std::uint32_t>> edges;
  Box top;
  for (std::size_t at = 0; box_at(data, at, size, top); at = top.end) {
    if (top.type != fourcc("meta") || top.end - top.body < 4) continue;
    Box child;
    for (std::size_t in = top.body + 4; box_at(data, in, top.end, child); in = child.end) {  // meta is a FullBox
      if (child.type != fourcc("iref") || child.end - child.body < 4) continue;
      const std::size_t id_bytes = data[child.body] == 0 ? 2 : 4;
      const std::size_t end = child.end;
      const EndianReader big_endian{data, false};
      std::size_t r = child.body + 4;
      // Reads `bytes` (at most 8) at r, moving past them; false where the box ends first (libheif stops there too).
      const auto read = [&](std::size_t bytes, std::uint64_t& value) {
        if (end - r < bytes) return false;
        value = big_endian.get(r, static_cast<int>(bytes));
        r += bytes;
        return true;
      };
      std::uint64_t box_size = 0;
      std::uint64_t type = 0;
      std::uint64_t skipped = 0;
      std::uint64_t from = 0;
      std::uint64_t count = 0;
      while (r < end && read(4, box_size) && read(4, type)) {
        if (box_size == 1 && !read(8, skipped)) break;  // a 64-bit size, ignored as well
        if (type == fourcc("uuid") && !(read(8, skipped) && read(8, skipped))) break;
        if (!read(id_bytes, from) || !read(2, count)) break;
        const bool dimg = type == fourcc("dimg");
        const bool auxl = type == fourcc("auxl");
        std::uint64_t to = 0;
        for (std::uint64_t k = 0; k < count && read(id_bytes, to); ++k) {
          if (dimg) {
            edges[static_cast<std::uint32_t>(from)].push_back(static_cast<std::uint32_t>(to));  // its tile
          } else if (auxl) {
            edges[static_cast<std::uint32_t>(to)].push_back(static_cast<std::uint32_t>(from));  // its alpha, depth
          }
        }
      }
    }
  }
  return edges;
}

// Why the file's item references cannot be decoded ("" when they can): a cycle, or a chain of more than kMostDepth
// items (a grid's tiles with their alpha images are 3).
std::string reference_problem(const std::uint8_t* data, std::size_t size) {
  constexpr std::size_t kMostDepth = 16;
  const auto edges = decoded_with(data, size);
  // Depth-first from every item, iteratively: on the path (a cycle when met again), or done with its depth known.
  std::map<std::uint32_t, std::size_t> depth;  // items done: the longest chain from them
  std::map<std::uint32_t, bool> on_path;
  for (const auto& start : edges) {
    if (depth.count(start.first) != 0) continue;
    std::vector<std::pair<std::uint32_t, std::size_t>> stack{{start.first, 0}};  // item, next edge to follow
    on_path[start.first] = true;
    while (!stack.empty()) {
      auto& [item, next] = stack.back();
      const auto found = edges.find(item);
      const std::vector<std::uint32_t> none;
      const std::vector<std::uint32_t>& to = found == edges.end() ? none : found->second;
      if (next < to.size()) {
        const std::uint32_t child = to[next++];
        if (on_path[child]) return "item " + std::to_string(child) + " is among the items it is made of";
        if (depth.count(child) == 0) {
          on_path[child] = true;
          stack.emplace_back(child, 0);
        }
        continue;
      }
      std::size_t longest = 0;
      for (const std::uint32_t child : to) longest = std::max(longest, depth[child] + 1);
      if (longest > kMostDepth) return "its items nest more than " + std::to_string(kMostDepth) + " deep";
      depth[item] = longest;
      on_path[item] = false;
      stack.pop_back();
    }
  }
  return "";
}

// libheif's functions, resolved once a process (from the library's soname, as the build found it).
struct Heif {
  std::string error;  // why libheif cannot be used; "" when it can
  decltype(&heif_init) init = nullptr;
  decltype(&heif_context_alloc) context_alloc = nullptr;
  decltype(&heif_context_free) context_free = nullptr;
  decltype(&heif_context_read_from_memory_without_copy) read_from_memory = nullptr;
  decltype(&heif_context_set_maximum_image_size_limit) set_size_limit = nullptr;
  decltype(&heif_context_get_primary_image_handle) primary_handle = nullptr;
  decltype(&heif_image_handle_release) handle_release = nullptr;
  decltype(&heif_image_handle_get_width) handle_width = nullptr;
  decltype(&heif_image_handle_get_height) handle_height = nullptr;
  decltype(&heif_image_handle_get_ispe_width) ispe_width = nullptr;
  decltype(&heif_image_handle_get_ispe_height) ispe_height = nullptr;
  decltype(&heif_image_handle_has_alpha_channel) has_alpha = nullptr;
  decltype(&heif_image_handle_get_luma_bits_per_pixel) luma_bits = nullptr;
  decltype(&heif_image_handle_get_color_profile_type) profile_type = nullptr;
  decltype(&heif_image_handle_get_raw_color_profile_size) profile_size = nullptr;
  decltype(&heif_image_handle_get_raw_color_profile) profile = nullptr;
  decltype(&heif_image_handle_get_nclx_color_profile) nclx_profile = nullptr;
  decltype(&heif_image_handle_get_number_of_metadata_blocks) metadata_count = nullptr;
  decltype(&heif_image_handle_get_list_of_metadata_block_IDs) metadata_ids = nullptr;
  decltype(&heif_image_handle_get_metadata_content_type) metadata_content_type = nullptr;
  decltype(&heif_image_handle_get_metadata_size) metadata_size = nullptr;
  decltype(&heif_image_handle_get_metadata) metadata = nullptr;
  decltype(&heif_decode_image) decode = nullptr;
  decltype(&heif_image_get_width) image_width = nullptr;
  decltype(&heif_image_get_height) image_height = nullptr;
  decltype(&heif_image_get_bits_per_pixel_range) bits_range = nullptr;
  decltype(&heif_image_get_plane_readonly) plane = nullptr;
  decltype(&heif_image_release) image_release = nullptr;
  // AVIF outputs.
  decltype(&heif_context_get_encoder_for_format) encoder_for_format = nullptr;
  decltype(&heif_encoder_release) encoder_release = nullptr;
  decltype(&heif_encoder_set_lossy_quality) set_quality = nullptr;
  decltype(&heif_encoder_set_lossless) set_lossless = nullptr;
  decltype(&heif_encoder_set_parameter_string) set_string = nullptr;
  decltype(&heif_encoder_set_parameter_boolean) set_boolean = nullptr;
  decltype(&heif_image_create) image_create = nullptr;
  decltype(&heif_image_add_plane) add_plane = nullptr;
  decltype(&heif_image_get_plane) writable_plane = nullptr;
  decltype(&heif_image_set_raw_color_profile) set_icc = nullptr;
  decltype(&heif_image_set_nclx_color_profile) set_nclx = nullptr;
  decltype(&heif_nclx_color_profile_alloc) nclx_alloc = nullptr;
  decltype(&heif_nclx_color_profile_free) nclx_free = nullptr;
  decltype(&heif_encoding_options_alloc) options_alloc = nullptr;
  decltype(&heif_encoding_options_free) options_free = nullptr;
  decltype(&heif_context_encode_image) encode_image = nullptr;
  decltype(&heif_context_add_exif_metadata) add_exif = nullptr;
  decltype(&heif_context_add_XMP_metadata) add_xmp = nullptr;
  decltype(&heif_context_write) write = nullptr;
};

const Heif& heif() {
  static const Heif loaded = [] {
    Heif h;
    SharedLibrary library;
    if (!library.open(RSZ_LIBHEIF_SONAME)) {
      h.error = std::string("libheif (") + RSZ_LIBHEIF_SONAME + ") cannot be loaded" +
                (library.why().empty() ? "" : ": " + library.why()) + "; install it (Debian: libheif1)";
      return h;
    }
    const bool all =
        library.resolve("heif_context_alloc", h.context_alloc) && library.resolve("heif_context_free", h.context_free) &&
        library.resolve("heif_context_read_from_memory_without_copy", h.read_from_memory) &&
        library.resolve("heif_context_set_maximum_image_size_limit", h.set_size_limit) &&
        library.resolve("heif_context_get_primary_image_handle", h.primary_handle) &&
        library.resolve("heif_image_handle_release", h.handle_release) &&
        library.resolve("heif_image_handle_get_width", h.handle_width) &&
        library.resolve("heif_image_handle_get_height", h.handle_height) &&
        library.resolve("heif_image_handle_get_ispe_width", h.ispe_width) &&
        library.resolve("heif_image_handle_get_ispe_height", h.ispe_height) &&
        library.resolve("heif_image_handle_has_alpha_channel", h.has_alpha) &&
        library.resolve("heif_image_handle_get_luma_bits_per_pixel", h.luma_bits) &&
        library.resolve("heif_image_handle_get_color_profile_type", h.profile_type) &&
        library.resolve("heif_image_handle_get_raw_color_profile_size", h.profile_size) &&
        library.resolve("heif_image_handle_get_raw_color_profile", h.profile) &&
        library.resolve("heif_image_handle_get_nclx_color_profile", h.nclx_profile) &&
        library.resolve("heif_image_handle_get_number_of_metadata_blocks", h.metadata_count) &&
        library.resolve("heif_image_handle_get_list_of_metadata_block_IDs", h.metadata_ids) &&
        library.resolve("heif_image_handle_get_metadata_content_type", h.metadata_content_type) &&
        library.resolve("heif_image_handle_get_metadata_size", h.metadata_size) &&
        library.resolve("heif_image_handle_get_metadata", h.metadata) &&
        library.resolve("heif_decode_image", h.decode) && library.resolve("heif_image_get_width", h.image_width) &&
        library.resolve("heif_image_get_height", h.image_height) &&
        library.resolve("heif_image_get_bits_per_pixel_range", h.bits_range) &&
        library.resolve("heif_image_get_plane_readonly", h.plane) &&
        library.resolve("heif_image_release", h.image_release) && library.resolve("heif_init", h.init) &&
        library.resolve("heif_context_get_encoder_for_format", h.encoder_for_format) &&
        library.resolve("heif_encoder_release", h.encoder_release) &&
        library.resolve("heif_encoder_set_lossy_quality", h.set_quality) &&
        library.resolve("heif_encoder_set_lossless", h.set_lossless) &&
        library.resolve("heif_encoder_set_parameter_string", h.set_string) &&
        library.resolve("heif_encoder_set_parameter_boolean", h.set_boolean) &&
        library.resolve("heif_image_create", h.image_create) && library.resolve("heif_image_add_plane", h.add_plane) &&
        library.resolve("heif_image_get_plane", h.writable_plane) &&
        library.resolve("heif_image_set_raw_color_profile", h.set_icc) &&
        library.resolve("heif_image_set_nclx_color_profile", h.set_nclx) &&
        library.resolve("heif_nclx_color_profile_alloc", h.nclx_alloc) &&
        library.resolve("heif_nclx_color_profile_free", h.nclx_free) &&
        library.resolve("heif_encoding_options_alloc", h.options_alloc) &&
        library.resolve("heif_encoding_options_free", h.options_free) &&
        library.resolve("heif_context_encode_image", h.encode_image) &&
        library.resolve("heif_context_add_exif_metadata", h.add_exif) &&
        library.resolve("heif_context_add_XMP_metadata", h.add_xmp) && library.resolve("heif_context_write", h.write);
    if (!all) {
      h.error = std::string("libheif (") + RSZ_LIBHEIF_SONAME + ") lacks a function rsz needs";
      library.close();
      return h;
    }
    // Once a process, before any decoding: libheif sets up its decoder plugins and colour conversions here (first
    // decodes of several threads could otherwise race on them).
    const heif_error init = h.init(nullptr);
    if (init.code != heif_error_Ok) {
      h.error = std::string("libheif cannot start: ") + (init.message != nullptr ? init.message : "heif_init failed");
    }
    return h;
  }();
  return loaded;
}

const Heif& need_heif(const std::string& path, const Codec& codec) {
  const Heif& h = heif();
  if (!h.error.empty()) fail(ErrorCode::Io, path, std::string("cannot read ") + codec.display_name + ": " + h.error);
  return h;
}

// A file's boxes as libheif read them (nothing decoded), and its primary image. Both are owned by members, so that
// a file the constructor refuses (it throws) gives them back too.
class HeifFile {
 public:
  HeifFile(const Codec& codec, const std::string& path, const FileBytes& bytes, const ImageReadOptions& options)
      : h_(need_heif(path, codec)), context_(nullptr, h_.context_free), handle_(nullptr, h_.handle_release) {
    // libheif refuses an item (a grid, a tile, an alpha or depth image) whose side is past its limit as it reads the
    // boxes, and would otherwise allocate for it while decoding: read once with its own limit (32768) for the primary
    // image's size, then again with about that size as the limit, so that no item much larger than the image that
    // rsz checked against --max-pixels and the memory budget is ever decoded.
    if (const std::string problem = reference_problem(bytes.data, bytes.size); !problem.empty()) {
      fail(ErrorCode::Format, path, "its item references cannot be decoded (" + problem + ")");
    }
    read(codec, path, bytes, 0);
    check_pixel_limit(path, h_.handle_width(handle_.get()), h_.handle_height(handle_.get()), options);
    // The limit is a side, for width and height alike: the primary image's stored size (before its crop), with 256
    // pixels of margin for coding blocks. That square is held to 4 x --max-pixels too, so that an elongated image
    // cannot open the way to a huge tile (libheif 1.15 knows no area limit).
    const std::int64_t side =
        std::max<std::int64_t>(h_.ispe_width(handle_.get()), h_.ispe_height(handle_.get())) + 256;
    if (side * side > 4 * options.max_pixels) {
      fail(ErrorCode::Format, path, "its image of " + size_text(h_.ispe_width(handle_.get()),
                                                                   h_.ispe_height(handle_.get())) +
                                        " would let its other items reach " + size_text(side, side) +
                                        ", over 4 x --max-pixels (" + std::to_string(options.max_pixels) + ")");
    }
    if (side < 32768) read(codec, path, bytes, static_cast<int>(side));
  }

  const Heif& lib() const { return h_; }
  heif_image_handle* handle() const { return handle_.get(); }

  // Reads the boxes with a side limit (0: libheif's own) and takes the primary image.
  void read(const Codec& codec, const std::string& path, const FileBytes& bytes, int limit) {
    handle_.reset();
    context_.reset(h_.context_alloc());
    if (!context_) fail(ErrorCode::Io, path, "cannot read: out of memory");
    if (limit > 0) h_.set_size_limit(context_.get(), limit);
    check(codec, path, h_.read_from_memory(context_.get(), bytes.data, bytes.size, nullptr));
    heif_image_handle* handle = nullptr;
    const heif_error found = h_.primary_handle(context_.get(), &handle);
    handle_.reset(handle);
    check(codec, path, found);
  }

  static void check(const Codec& codec, const std::string& path, const heif_error& error) {
    if (error.code == heif_error_Ok) return;
    std::string message = error.message != nullptr ? error.message : "libheif cannot read it";
    while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
    if (error.subcode == heif_suberror_Security_limit_exceeded) {  // a declared size past libheif's own limits
      fail(ErrorCode::Format, path, "it exceeds a libheif security limit (" + message +
                                        "): an item larger than its image or past 32768 pixels a side, or too many "
                                        "items or boxes; nothing of it is decoded");
    }
    if (error.code == heif_error_Memory_allocation_error) fail(ErrorCode::Io, path, "cannot read: out of memory");
    fail_corrupt(path, codec, message);
  }

 private:
  const Heif& h_;
  std::unique_ptr<heif_context, decltype(&heif_context_free)> context_;
  std::unique_ptr<heif_image_handle, decltype(&heif_image_handle_release)> handle_;
};

HeaderFacts facts_of(const Codec& codec, const std::string& path, const HeifFile& file,
                     const ImageReadOptions& options) {
  const Heif& h = file.lib();
  HeaderFacts facts;
  facts.width = h.handle_width(file.handle());
  facts.height = h.handle_height(file.handle());
  if (facts.width <= 0 || facts.height <= 0) {
    fail_corrupt(path, codec, "its primary image has size " + size_text(facts.width, facts.height));
  }
  check_pixel_limit(path, facts.width, facts.height, options);
  facts.channels = h.has_alpha(file.handle()) != 0 ? 4 : 3;
  facts.bit_depth = h.luma_bits(file.handle()) > 8 ? 16 : 8;
  // What the decoder holds besides the result: the decoded planes (up to 4:4:4 with alpha) and libheif's own RGB
  // image, of the sample size it decodes to.
  const std::uint64_t pixels = static_cast<std::uint64_t>(facts.width) * static_cast<std::uint64_t>(facts.height);
  facts.decoder_bytes = pixels * static_cast<std::uint64_t>(4 + facts.channels) * (facts.bit_depth / 8);
  return facts;
}

HeaderFacts probe_heif(const Codec& codec, const std::string& path, const FileBytes& bytes, bool /*whole*/,
                       const ImageReadOptions& options) {
  if (!bytes.complete) throw NeedMoreBytes{};  // libheif reads the boxes from the whole file
  if (bytes.size < 16) fail_truncated(path, codec, bytes.size, "inside the ftyp box");
  const HeifFile file(codec, path, bytes, options);
  return facts_of(codec, path, file, options);
}

// The file's metadata blocks of `type` ("Exif", "mime"), with their content type for "mime".
std::vector<std::pair<std::string, std::string>> metadata_blocks(const HeifFile& file, const char* type) {
  const Heif& h = file.lib();
  const int count = h.metadata_count(file.handle(), type);
  std::vector<heif_item_id> ids(static_cast<std::size_t>(std::max(count, 0)));
  if (count > 0) h.metadata_ids(file.handle(), type, ids.data(), count);
  std::vector<std::pair<std::string, std::string>> blocks;
  for (const heif_item_id id : ids) {
    std::string data(h.metadata_size(file.handle(), id), '\0');
    if (h.metadata(file.handle(), id, data.data()).code != heif_error_Ok) continue;
    const char* content = h.metadata_content_type(file.handle(), id);
    blocks.emplace_back(content != nullptr ? content : "", std::move(data));
  }
  return blocks;
}

void read_metadata(const HeifFile& file, Image& image) {
  const Heif& h = file.lib();
  const heif_color_profile_type type = h.profile_type(file.handle());
  if (type == heif_color_profile_type_prof || type == heif_color_profile_type_rICC) {
    std::string icc(h.profile_size(file.handle()), '\0');
    if (!icc.empty() && h.profile(file.handle(), icc.data()).code == heif_error_Ok) image.icc_profile = std::move(icc);
  } else if (type == heif_color_profile_type_nclx) {
    // Colour stated by code points (an AVIF's Display P3, a HEIC's BT.2020): the ICC profile of it travels with the
    // pixels instead (none for sRGB itself, or for an HDR transfer that no ICC curve states).
    // libheif hands out the struct even with an error (unknown code points): freed whatever it says.
    heif_color_profile_nclx* nclx = nullptr;
    const bool read = h.nclx_profile(file.handle(), &nclx).code == heif_error_Ok && nclx != nullptr;
    NclxColour colour;
    if (read) {
      colour.primaries = static_cast<int>(nclx->color_primaries);
      colour.transfer = static_cast<int>(nclx->transfer_characteristics);
    }
    if (nclx != nullptr) h.nclx_free(nclx);
    if (read) image.icc_profile = icc_of_nclx(colour);
  }
  for (auto& [content, data] : metadata_blocks(file, "Exif")) {
    // A 4-byte big-endian offset to the TIFF header, then the EXIF itself.
    if (data.size() < 4) continue;
    const std::size_t offset = (std::size_t{static_cast<std::uint8_t>(data[0])} << 24) |
                               (std::size_t{static_cast<std::uint8_t>(data[1])} << 16) |
                               (std::size_t{static_cast<std::uint8_t>(data[2])} << 8) | static_cast<std::uint8_t>(data[3]);
    if (offset > data.size() - 4) continue;
    image.exif = data.substr(4 + offset);
    reset_exif_orientation(image.exif);  // libheif turned the pixels upright (irot / imir)
    break;
  }
  for (auto& [content, data] : metadata_blocks(file, "mime")) {
    if (content == "application/rdf+xml") {
      image.xmp = std::move(data);
      break;
    }
  }
}

Image read_heif(const Codec& codec, const std::string& path, const FileBytes& bytes, const ImageReadOptions& options) {
  if (bytes.size < 16) fail_truncated(path, codec, bytes.size, "inside the ftyp box");
  const HeifFile file(codec, path, bytes, options);
  const HeaderFacts facts = facts_of(codec, path, file, options);
  const Heif& h = file.lib();
  const bool alpha = facts.channels == 4;
  const bool deep = facts.bit_depth == 16;
  const heif_chroma chroma = deep ? (alpha ? heif_chroma_interleaved_RRGGBBAA_LE : heif_chroma_interleaved_RRGGBB_LE)
                                  : (alpha ? heif_chroma_interleaved_RGBA : heif_chroma_interleaved_RGB);
  heif_image* decoded = nullptr;
  const heif_error error = h.decode(file.handle(), &decoded, heif_colorspace_RGB, chroma, nullptr);
  const std::unique_ptr<heif_image, decltype(h.image_release)> keep(decoded, h.image_release);
  HeifFile::check(codec, path, error);
  int stride = 0;
  const std::uint8_t* plane = h.plane(decoded, heif_channel_interleaved, &stride);
  const std::int64_t width = h.image_width(decoded, heif_channel_interleaved);
  const std::int64_t height = h.image_height(decoded, heif_channel_interleaved);
  if (plane == nullptr || width != facts.width || height != facts.height) {
    fail_corrupt(path, codec, "libheif decoded " + size_text(width, height) + " for an image of " +
                                  size_text(facts.width, facts.height));
  }
  Image image;
  image.width = width;
  image.height = height;
  image.channels = facts.channels;
  image.bit_depth = facts.bit_depth;
  const std::size_t row = static_cast<std::size_t>(width * facts.channels);
  try {
    if (!deep) {
      image.data8.resize(row * static_cast<std::size_t>(height));
      for (std::int64_t y = 0; y < height; ++y) {
        std::memcpy(image.data8.data() + static_cast<std::size_t>(y) * row, plane + y * stride, row);
      }
    } else {
      // 10- or 12-bit samples (little-endian in 16 bits) stretched to 16 bits: v * 65535 / max, rounded.
      const int bits = std::clamp(h.bits_range(decoded, heif_channel_interleaved), 9, 16);
      const std::uint32_t max = (1u << bits) - 1;
      image.data16.resize(row * static_cast<std::size_t>(height));
      for (std::int64_t y = 0; y < height; ++y) {
        const std::uint8_t* in = plane + y * stride;
        std::uint16_t* out = image.data16.data() + static_cast<std::size_t>(y) * row;
        for (std::size_t i = 0; i < row; ++i) {
          const std::uint32_t v = std::min<std::uint32_t>(in[2 * i] | (std::uint32_t{in[2 * i + 1]} << 8), max);
          out[i] = static_cast<std::uint16_t>((v * 65535u + max / 2) / max);
        }
      }
    }
  } catch (const std::bad_alloc&) {
    fail(ErrorCode::Io, path, "cannot read: out of memory for a " + size_text(width, height) + " image");
  }
  read_metadata(file, image);
  return image;
}

// ---- AVIF outputs ----

// The default quality of AVIF outputs (libheif's and vips's).
constexpr int kAvifQuality = 50;

// Whatever an encode holds, given back however it ends.
struct AvifEncode {
  const Heif& h;
  heif_context* context = nullptr;
  heif_encoder* encoder = nullptr;
  heif_image* image = nullptr;
  heif_image_handle* handle = nullptr;
  heif_color_profile_nclx* nclx = nullptr;
  heif_encoding_options* options = nullptr;
  explicit AvifEncode(const Heif& heif) : h(heif) {}
  ~AvifEncode() {
    if (handle != nullptr) h.handle_release(handle);
    if (image != nullptr) h.image_release(image);
    if (encoder != nullptr) h.encoder_release(encoder);
    if (nclx != nullptr) h.nclx_free(nclx);
    if (options != nullptr) h.options_free(options);
    if (context != nullptr) h.context_free(context);
  }
  AvifEncode(const AvifEncode&) = delete;
  AvifEncode& operator=(const AvifEncode&) = delete;
};

void check_encode(const std::string& path, const heif_error& error, const char* step) {
  if (error.code == heif_error_Ok) return;
  if (error.code == heif_error_Memory_allocation_error) fail(ErrorCode::Io, path, "cannot write AVIF: out of memory");
  fail(ErrorCode::Io, path,
       std::string("cannot write AVIF (") + step + "): " + (error.message != nullptr ? error.message : "libheif failed"));
}

// The interleaved RGB / RGBA plane of the image, its rows copied from the samples (gray's sample three times).
void fill_rgb(const Heif& h, const std::string& path, heif_image* image, const Image& src) {
  const int out_channels = src.channels <= 2 ? src.channels + 2 : src.channels;
  check_encode(path,
               h.add_plane(image, heif_channel_interleaved, static_cast<int>(src.width), static_cast<int>(src.height), 8),
               "add_plane");
  int stride = 0;
  std::uint8_t* rows = h.writable_plane(image, heif_channel_interleaved, &stride);
  if (rows == nullptr) fail(ErrorCode::Io, path, "cannot write AVIF: libheif gave no plane");
  const auto width = static_cast<std::size_t>(src.width);
  const auto channels = static_cast<std::size_t>(src.channels);
  for (std::int64_t y = 0; y < src.height; ++y) {
    const std::uint8_t* in = src.data8.data() + static_cast<std::size_t>(y) * width * channels;
    std::uint8_t* out = rows + static_cast<std::size_t>(y) * static_cast<std::size_t>(stride);
    if (out_channels == src.channels) {
      std::memcpy(out, in, width * channels);
      continue;
    }
    for (std::size_t x = 0; x < width; ++x, in += channels) {
      out[0] = out[1] = out[2] = in[0];
      if (channels == 2) out[3] = in[1];
      out += out_channels;
    }
  }
}

// AV1 in an AVIF file through libheif's encoder (aom): 8-bit RGB or RGBA (gray as RGB); lossy at
// options.quality (0: 50), 4:2:0; lossless (options.lossless): 4:4:4 with the identity matrix (the RGB samples
// themselves, as GBR planes) and lossless alpha. The ICC profile, EXIF and XMP are written.
std::vector<std::uint8_t> encode_avif(const Codec& codec, const std::string& path, const Image& src,
                                      const ImageWriteOptions& options) {
  const Heif& h = heif();
  if (!h.error.empty()) fail(ErrorCode::Io, path, std::string("cannot write ") + codec.display_name + ": " + h.error);
  AvifEncode e(h);
  e.context = h.context_alloc();
  if (e.context == nullptr) fail(ErrorCode::Io, path, "cannot write AVIF: out of memory");
  check_encode(path, h.encoder_for_format(e.context, heif_compression_AV1, &e.encoder), "no AV1 encoder");
  // Gray is written as three equal channels (libheif decodes every AVIF to RGB, and so reads it back).
  const bool alpha = src.channels == 2 || src.channels == 4;
  check_encode(path,
               h.image_create(static_cast<int>(src.width), static_cast<int>(src.height), heif_colorspace_RGB,
                              alpha ? heif_chroma_interleaved_RGBA : heif_chroma_interleaved_RGB, &e.image),
               "image_create");
  fill_rgb(h, path, e.image, src);
  const bool icc = profile_fits(src.icc_profile, src.channels + (src.channels <= 2 ? 2 : 0));
  if (icc) {
    check_encode(path, h.set_icc(e.image, "prof", src.icc_profile.data(), src.icc_profile.size()), "ICC profile");
  }
  e.options = h.options_alloc();
  e.nclx = h.nclx_alloc();
  if (e.options == nullptr || e.nclx == nullptr) fail(ErrorCode::Io, path, "cannot write AVIF: out of memory");
  // sRGB's primaries and curve, or "unspecified" beside a profile (which states them: the boxes must not disagree);
  // the matrix is always stated (the samples are coded with it).
  e.nclx->color_primaries = icc ? heif_color_primaries_unspecified : heif_color_primaries_ITU_R_BT_709_5;
  e.nclx->transfer_characteristics =
      icc ? heif_transfer_characteristic_unspecified : heif_transfer_characteristic_IEC_61966_2_1;
  e.nclx->full_range_flag = 1;
  if (options.lossless) {
    e.nclx->matrix_coefficients = heif_matrix_coefficients_RGB_GBR;
    check_encode(path, h.set_lossless(e.encoder, 1), "lossless");
    check_encode(path, h.set_string(e.encoder, "chroma", "444"), "chroma");
    check_encode(path, h.set_boolean(e.encoder, "lossless-alpha", 1), "lossless alpha");
  } else {
    e.nclx->matrix_coefficients = heif_matrix_coefficients_ITU_R_BT_601_6;
    check_encode(path, h.set_quality(e.encoder, options.quality > 0 ? options.quality : kAvifQuality), "quality");
  }
  check_encode(path, h.set_nclx(e.image, e.nclx), "colour");
  e.options->output_nclx_profile = e.nclx;
  // Both colour boxes where there is a profile: the matrix the samples were coded with must reach the decoder.
  e.options->save_two_colr_boxes_when_ICC_and_nclx_available = 1;
  check_encode(path, h.encode_image(e.context, e.image, e.encoder, e.options, &e.handle), "encode");
  if (!src.exif.empty()) {
    check_encode(path, h.add_exif(e.context, e.handle, src.exif.data(), static_cast<int>(src.exif.size())), "EXIF");
  }
  if (!src.xmp.empty()) {
    check_encode(path, h.add_xmp(e.context, e.handle, src.xmp.data(), static_cast<int>(src.xmp.size())), "XMP");
  }
  std::vector<std::uint8_t> bytes;
  heif_writer writer{};
  writer.writer_api_version = 1;
  writer.write = [](heif_context*, const void* data, size_t size, void* out) {
    auto* v = static_cast<std::vector<std::uint8_t>*>(out);
    const auto* p = static_cast<const std::uint8_t*>(data);
    v->insert(v->end(), p, p + size);
    return heif_error{heif_error_Ok, heif_suberror_Unspecified, "ok"};
  };
  check_encode(path, h.write(e.context, &writer, &bytes), "write");
  return bytes;
}

Codec heif_family_codec() {
  Codec c;
  c.probe = probe_heif;
  c.info = info_from_header;
  c.decode = read_heif;
  c.metadata_read = kIcc | kExif | kXmp;
  return c;
}

}  // namespace

Codec heic_codec() {
  Codec c = heif_family_codec();
  c.format = ImageFormat::Heic;
  c.name = "heic";
  c.display_name = "HEIC";
  c.family = "HEIC";
  c.read_only_extensions = {".heic", ".heif"};
  c.sniff = sniff_heic;
  return c;
}

Codec avif_codec() {
  Codec c = heif_family_codec();
  c.format = ImageFormat::Avif;
  c.name = "avif";
  c.display_name = "AVIF";
  c.family = "AVIF";
  c.extensions = {".avif", nullptr};
  c.sniff = sniff_avif;
  c.encode = encode_avif;
  c.depths = kWrites8;
  c.channels = kGray | kGrayAlpha | kRgb | kRgba;
  c.gray_as_rgb = true;
  c.max_side = 32768;  // libheif reads no larger (its security limit), so rsz writes no larger
  c.max_side_reason = " (as libheif reads it)";
  c.metadata_written = kIcc | kExif | kXmp;
  return c;
}

}  // namespace rsz::io::detail
