// JPEG XL: the codec entry, its signatures (a bare codestream, or the ISO BMFF container) and libjxl's decoder and
// encoder, loaded with dlopen the first time such a file is read or written. The image is the first frame (an
// animation says so, as a GIF does), turned upright by libjxl as its orientation field says (the EXIF tag then reads
// 1), with alpha where the file has it; samples of more than 8 bits (or floating point) are decoded to 16 bits. The
// ICC profile of the decoded pixels, and the Exif and xml boxes (EXIF, XMP), are kept. libjxl's threads are rsz's
// pool's (a parallel runner of its own), and libjxl's traces of a damaged file's failures are muted in the rsz
// program (CodecStderrMute).
//
// The probe asks libjxl for the basic information (nothing decoded) so that --max-pixels refuses a bomb first.
#include <jxl/decode.h>
#include <jxl/encode.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <memory>

#include "rsz/exec.h"
#include "rsz/io/colour.h"

#include "codecs/header_reader.h"
#include "file_util.h"

namespace rsz::io::detail {
namespace {

bool sniff_jxl(const std::uint8_t* data, std::size_t size) {
  static const std::uint8_t kContainer[] = {0, 0, 0, 0x0C, 'J', 'X', 'L', ' ', 0x0D, 0x0A, 0x87, 0x0A};
  return (size >= 2 && data[0] == 0xFF && data[1] == 0x0A) ||
         (size >= sizeof kContainer && std::memcmp(data, kContainer, sizeof kContainer) == 0);
}

struct Jxl {
  std::string error;
  decltype(&JxlDecoderCreate) create = nullptr;
  decltype(&JxlDecoderDestroy) destroy = nullptr;
  decltype(&JxlDecoderSubscribeEvents) subscribe = nullptr;
  decltype(&JxlDecoderSetInput) set_input = nullptr;
  decltype(&JxlDecoderCloseInput) close_input = nullptr;
  decltype(&JxlDecoderProcessInput) process = nullptr;
  decltype(&JxlDecoderGetBasicInfo) basic_info = nullptr;
  decltype(&JxlDecoderGetICCProfileSize) icc_size = nullptr;
  decltype(&JxlDecoderGetColorAsICCProfile) icc = nullptr;
  decltype(&JxlDecoderGetColorAsEncodedProfile) encoded_colour = nullptr;
  decltype(&JxlDecoderImageOutBufferSize) out_size = nullptr;
  decltype(&JxlDecoderSetImageOutBuffer) set_out = nullptr;
  decltype(&JxlDecoderSetDecompressBoxes) decompress_boxes = nullptr;
  decltype(&JxlDecoderGetBoxType) box_type = nullptr;
  decltype(&JxlDecoderSetBoxBuffer) set_box = nullptr;
  decltype(&JxlDecoderReleaseBoxBuffer) release_box = nullptr;
  decltype(&JxlDecoderSetParallelRunner) decoder_runner = nullptr;
  decltype(&JxlDecoderSetUnpremultiplyAlpha) unpremultiply = nullptr;
  // JPEG XL outputs.
  decltype(&JxlEncoderCreate) encoder_create = nullptr;
  decltype(&JxlEncoderDestroy) encoder_destroy = nullptr;
  decltype(&JxlEncoderSetParallelRunner) encoder_runner = nullptr;
  decltype(&JxlEncoderInitBasicInfo) init_basic_info = nullptr;
  decltype(&JxlEncoderSetBasicInfo) set_basic_info = nullptr;
  decltype(&JxlColorEncodingSetToSRGB) srgb = nullptr;
  decltype(&JxlEncoderSetColorEncoding) set_color = nullptr;
  decltype(&JxlEncoderSetICCProfile) set_icc = nullptr;
  decltype(&JxlEncoderInitExtraChannelInfo) init_extra = nullptr;
  decltype(&JxlEncoderSetExtraChannelInfo) set_extra = nullptr;
  decltype(&JxlEncoderFrameSettingsCreate) frame_settings = nullptr;
  decltype(&JxlEncoderSetFrameDistance) set_distance = nullptr;
  decltype(&JxlEncoderSetFrameLossless) set_lossless = nullptr;
  decltype(&JxlEncoderUseBoxes) use_boxes = nullptr;
  decltype(&JxlEncoderAddBox) add_box = nullptr;
  decltype(&JxlEncoderAddImageFrame) add_frame = nullptr;
  decltype(&JxlEncoderCloseInput) encoder_close = nullptr;
  decltype(&JxlEncoderProcessOutput) process_output = nullptr;
};

const Jxl& jxl() {
  static const Jxl loaded = [] {
    Jxl j;
    SharedLibrary library;
    if (!library.open(RSZ_LIBJXL_SONAME)) {
      j.error = std::string("libjxl (") + RSZ_LIBJXL_SONAME + ") cannot be loaded" +
                (library.why().empty() ? "" : ": " + library.why()) + "; install it (Debian: libjxl0.7)";
      return j;
    }
    const bool all =
        library.resolve("JxlDecoderCreate", j.create) && library.resolve("JxlDecoderDestroy", j.destroy) &&
        library.resolve("JxlDecoderSubscribeEvents", j.subscribe) && library.resolve("JxlDecoderSetInput", j.set_input) &&
        library.resolve("JxlDecoderCloseInput", j.close_input) && library.resolve("JxlDecoderProcessInput", j.process) &&
        library.resolve("JxlDecoderGetBasicInfo", j.basic_info) &&
        library.resolve("JxlDecoderGetICCProfileSize", j.icc_size) &&
        library.resolve("JxlDecoderGetColorAsICCProfile", j.icc) &&
        library.resolve("JxlDecoderGetColorAsEncodedProfile", j.encoded_colour) &&
        library.resolve("JxlDecoderImageOutBufferSize", j.out_size) &&
        library.resolve("JxlDecoderSetImageOutBuffer", j.set_out) &&
        library.resolve("JxlDecoderSetDecompressBoxes", j.decompress_boxes) &&
        library.resolve("JxlDecoderGetBoxType", j.box_type) && library.resolve("JxlDecoderSetBoxBuffer", j.set_box) &&
        library.resolve("JxlDecoderReleaseBoxBuffer", j.release_box) &&
        library.resolve("JxlDecoderSetParallelRunner", j.decoder_runner) &&
        library.resolve("JxlDecoderSetUnpremultiplyAlpha", j.unpremultiply) &&
        library.resolve("JxlEncoderCreate", j.encoder_create) && library.resolve("JxlEncoderDestroy", j.encoder_destroy) &&
        library.resolve("JxlEncoderSetParallelRunner", j.encoder_runner) &&
        library.resolve("JxlEncoderInitBasicInfo", j.init_basic_info) &&
        library.resolve("JxlEncoderSetBasicInfo", j.set_basic_info) &&
        library.resolve("JxlColorEncodingSetToSRGB", j.srgb) &&
        library.resolve("JxlEncoderSetColorEncoding", j.set_color) &&
        library.resolve("JxlEncoderSetICCProfile", j.set_icc) &&
        library.resolve("JxlEncoderInitExtraChannelInfo", j.init_extra) &&
        library.resolve("JxlEncoderSetExtraChannelInfo", j.set_extra) &&
        library.resolve("JxlEncoderFrameSettingsCreate", j.frame_settings) &&
        library.resolve("JxlEncoderSetFrameDistance", j.set_distance) &&
        library.resolve("JxlEncoderSetFrameLossless", j.set_lossless) &&
        library.resolve("JxlEncoderUseBoxes", j.use_boxes) && library.resolve("JxlEncoderAddBox", j.add_box) &&
        library.resolve("JxlEncoderAddImageFrame", j.add_frame) &&
        library.resolve("JxlEncoderCloseInput", j.encoder_close) &&
        library.resolve("JxlEncoderProcessOutput", j.process_output);
    if (!all) {
      j.error = std::string("libjxl (") + RSZ_LIBJXL_SONAME + ") lacks a function rsz needs";
      library.close();
    }
    return j;
  }();
  return loaded;
}

// libjxl's parallel work on rsz's pool: `end - start` items, claimed in order by up to usable_cpus() tasks, each task
// libjxl's "thread" (its id indexes libjxl's per-thread state).
JxlParallelRetCode run_on_pool(void* /*runner*/, void* opaque, JxlParallelRunInit init, JxlParallelRunFunction func,
                               std::uint32_t start, std::uint32_t end) {
  if (end <= start) return 0;
  const std::uint32_t count = end - start;
  const auto tasks = static_cast<std::uint32_t>(std::clamp<std::int64_t>(rsz::usable_cpus(), 1, count));
  if (init(opaque, tasks) != 0) return -1;
  std::atomic<std::uint32_t> next{start};
  rsz::parallel_tasks(tasks, static_cast<int>(tasks), [&](std::int64_t task) {
    for (std::uint32_t v = next.fetch_add(1); v < end; v = next.fetch_add(1)) {
      func(opaque, v, static_cast<std::size_t>(task));
    }
  });
  return 0;
}

// A decoder fed the whole file, destroyed when it goes; libjxl's stderr muted meanwhile (in the rsz program).
class Decoder {
 public:
  Decoder(const Codec& codec, const std::string& path, const FileBytes& bytes, int events) : j_(jxl()) {
    if (!j_.error.empty()) fail(ErrorCode::Io, path, "cannot read JPEG XL: " + j_.error);
    dec_ = j_.create(nullptr);
    if (dec_ == nullptr) fail(ErrorCode::Io, path, "cannot read: out of memory");
    if (j_.subscribe(dec_, events) != JXL_DEC_SUCCESS || j_.set_input(dec_, bytes.data, bytes.size) != JXL_DEC_SUCCESS ||
        j_.decoder_runner(dec_, run_on_pool, nullptr) != JXL_DEC_SUCCESS ||
        j_.unpremultiply(dec_, JXL_TRUE) != JXL_DEC_SUCCESS) {  // straight alpha, as every decoder gives it
      j_.destroy(dec_);  // the destructor does not run for a constructor that throws
      dec_ = nullptr;
      fail_corrupt(path, codec, "libjxl refuses it");
    }
    // The input is not closed: a file cut short then asks for more input (said here as truncated) instead of
    // failing inside libjxl, which prints its reason on stderr.
  }
  ~Decoder() {
    if (dec_ != nullptr) j_.destroy(dec_);
  }
  Decoder(const Decoder&) = delete;
  Decoder& operator=(const Decoder&) = delete;
  const Jxl& lib() const { return j_; }
  JxlDecoder* get() const { return dec_; }

 private:
  const Jxl& j_;
  CodecStderrMute mute_;
  JxlDecoder* dec_ = nullptr;
};

// libjxl asks for more bytes than the file holds: the file was cut short, or a damaged field says the data goes on.
[[noreturn]] void fail_cut_or_damaged(const Codec& codec, const std::string& path, const FileBytes& bytes,
                                      const char* where) {
  fail(ErrorCode::Format, path,
       std::string("the ") + codec.display_name + " file is truncated or damaged: libjxl needs more than its " +
           std::to_string(bytes.size) + " bytes " + where + "; a complete, valid " + codec.display_name +
           " file is required");
}

// The basic information's facts: the size upright (libjxl turns the pixels as the orientation field says).
HeaderFacts facts_of(const JxlBasicInfo& info, const std::string& path, const ImageReadOptions& options) {
  HeaderFacts facts;
  facts.width = info.xsize;  // the size upright: libjxl turns the image (and reports it so) unless asked not to
  facts.height = info.ysize;
  check_pixel_limit(path, facts.width, facts.height, options);
  facts.channels = static_cast<int>(info.num_color_channels) + (info.alpha_bits > 0 ? 1 : 0);
  facts.bit_depth = info.bits_per_sample > 8 || info.exponent_bits_per_sample > 0 ? 16 : 8;
  facts.animated = info.have_animation != 0;
  // libjxl holds float planes of every channel while it decodes.
  facts.decoder_bytes = static_cast<std::uint64_t>(facts.width) * static_cast<std::uint64_t>(facts.height) *
                        static_cast<std::uint64_t>(facts.channels) * 4;
  return facts;
}

HeaderFacts probe_jxl(const Codec& codec, const std::string& path, const FileBytes& bytes, bool /*whole*/,
                      const ImageReadOptions& options) {
  if (!bytes.complete) throw NeedMoreBytes{};  // libjxl is handed the whole file
  const Decoder d(codec, path, bytes, JXL_DEC_BASIC_INFO);
  for (;;) {
    const JxlDecoderStatus status = d.lib().process(d.get());
    if (status == JXL_DEC_BASIC_INFO) {
      JxlBasicInfo info{};
      if (d.lib().basic_info(d.get(), &info) != JXL_DEC_SUCCESS) fail_corrupt(path, codec, "no basic information");
      if (info.xsize == 0 || info.ysize == 0) fail_corrupt(path, codec, "it declares an empty image");
      return facts_of(info, path, options);
    }
    if (status == JXL_DEC_NEED_MORE_INPUT) fail_cut_or_damaged(codec, path, bytes, "before its basic information");
    fail_corrupt(path, codec, "libjxl cannot read its header");
  }
}

// The EXIF of an Exif box: a 4-byte big-endian offset to the TIFF header, then the EXIF.
std::string exif_of_box(const std::string& box) {
  if (box.size() < 4) return {};
  const std::size_t offset = (std::size_t{static_cast<std::uint8_t>(box[0])} << 24) |
                             (std::size_t{static_cast<std::uint8_t>(box[1])} << 16) |
                             (std::size_t{static_cast<std::uint8_t>(box[2])} << 8) | static_cast<std::uint8_t>(box[3]);
  return offset <= box.size() - 4 ? box.substr(4 + offset) : std::string();
}

Image read_jxl(const Codec& codec, const std::string& path, const FileBytes& bytes, const ImageReadOptions& options) {
  const Decoder d(codec, path, bytes, JXL_DEC_BASIC_INFO | JXL_DEC_COLOR_ENCODING | JXL_DEC_FULL_IMAGE | JXL_DEC_BOX);
  const Jxl& j = d.lib();
  j.decompress_boxes(d.get(), JXL_TRUE);
  Image image;
  JxlPixelFormat format{};
  std::string box;      // the box being read (Exif or xml), grown as libjxl asks
  std::string box_kind;  // "Exif", "xml " or "" for one not kept
  const auto finish_box = [&] {
    if (box_kind.empty()) return;
    box.resize(box.size() - j.release_box(d.get()));
    if (box_kind == "Exif" && image.exif.empty()) image.exif = exif_of_box(box);
    if (box_kind == "xml " && image.xmp.empty()) image.xmp = box;
    box_kind.clear();
  };
  for (;;) {
    const JxlDecoderStatus status = j.process(d.get());
    if (status == JXL_DEC_BASIC_INFO) {
      JxlBasicInfo info{};
      if (j.basic_info(d.get(), &info) != JXL_DEC_SUCCESS) fail_corrupt(path, codec, "no basic information");
      const HeaderFacts facts = facts_of(info, path, options);
      image.width = facts.width;
      image.height = facts.height;
      image.channels = facts.channels;
      image.bit_depth = facts.bit_depth;
      format = {static_cast<std::uint32_t>(facts.channels), facts.bit_depth == 16 ? JXL_TYPE_UINT16 : JXL_TYPE_UINT8,
                JXL_NATIVE_ENDIAN, 0};
    } else if (status == JXL_DEC_COLOR_ENCODING) {
      // Colour named as sRGB (the usual case) is no profile, as a PNG without one; other colour (an ICC profile, or
      // named P3 / BT.2020 primaries or another transfer) is libjxl's ICC profile of it, which --colorspace srgb reads.
      JxlColorEncoding named{};
      if (j.encoded_colour(d.get(), nullptr, JXL_COLOR_PROFILE_TARGET_DATA, &named) == JXL_DEC_SUCCESS &&
          named.white_point == JXL_WHITE_POINT_D65 && named.transfer_function == JXL_TRANSFER_FUNCTION_SRGB &&
          (named.color_space == JXL_COLOR_SPACE_GRAY ||
           (named.color_space == JXL_COLOR_SPACE_RGB && named.primaries == JXL_PRIMARIES_SRGB))) {
        continue;
      }
      std::size_t size = 0;
      if (j.icc_size(d.get(), nullptr, JXL_COLOR_PROFILE_TARGET_DATA, &size) == JXL_DEC_SUCCESS && size > 0) {
        std::string icc(size, '\0');
        if (j.icc(d.get(), nullptr, JXL_COLOR_PROFILE_TARGET_DATA, reinterpret_cast<std::uint8_t*>(icc.data()),
                  size) == JXL_DEC_SUCCESS) {
          image.icc_profile = std::move(icc);
        }
      }
    } else if (status == JXL_DEC_NEED_IMAGE_OUT_BUFFER) {
      std::size_t size = 0;
      if (j.out_size(d.get(), &format, &size) != JXL_DEC_SUCCESS) fail_corrupt(path, codec, "no output size");
      const std::size_t samples = static_cast<std::size_t>(image.width * image.height * image.channels);
      if (size != samples * static_cast<std::size_t>(image.bit_depth / 8)) {
        fail_corrupt(path, codec, "libjxl asks for an output of another size than its header's");
      }
      try {
        if (image.bit_depth == 16) {
          image.data16.resize(samples);
        } else {
          image.data8.resize(samples);
        }
      } catch (const std::bad_alloc&) {
        fail(ErrorCode::Io, path, "cannot read: out of memory for a " + size_text(image.width, image.height) + " image");
      }
      void* out = image.bit_depth == 16 ? static_cast<void*>(image.data16.data()) : image.data8.data();
      if (j.set_out(d.get(), &format, out, size) != JXL_DEC_SUCCESS) fail_corrupt(path, codec, "libjxl refuses it");
    } else if (status == JXL_DEC_BOX) {
      finish_box();
      JxlBoxType type{};
      if (j.box_type(d.get(), type, JXL_TRUE) != JXL_DEC_SUCCESS) continue;
      const std::string kind(type, 4);
      if (kind != "Exif" && kind != "xml ") continue;
      box_kind = kind;
      box.assign(64 << 10, '\0');
      j.set_box(d.get(), reinterpret_cast<std::uint8_t*>(box.data()), box.size());
    } else if (status == JXL_DEC_BOX_NEED_MORE_OUTPUT) {
      const std::size_t used = box.size() - j.release_box(d.get());
      if (box.size() >= bytes.size + (1u << 20)) fail_corrupt(path, codec, "a metadata box larger than the file");
      box.resize(box.size() * 2);
      j.set_box(d.get(), reinterpret_cast<std::uint8_t*>(box.data()) + used, box.size() - used);
    } else if (status == JXL_DEC_FULL_IMAGE) {
      // The first frame is the image; the boxes read so far are kept (an animation's other frames are not decoded).
      finish_box();
      break;
    } else if (status == JXL_DEC_SUCCESS) {
      break;
    } else if (status == JXL_DEC_NEED_MORE_INPUT) {
      fail_cut_or_damaged(codec, path, bytes, "before the end of its first frame");
    } else {
      fail_corrupt(path, codec, "libjxl cannot decode it");
    }
  }
  if (image.data8.empty() && image.data16.empty()) fail_corrupt(path, codec, "it holds no image");
  reset_exif_orientation(image.exif);  // libjxl turned the pixels upright: the tag must not turn them again
  return image;
}

// ---- JPEG XL outputs ----

// The Butteraugli distance of a quality, as cjxl maps them: 100 is lossless, 90 (the default) distance 1 ("visually
// lossless"), lower qualities farther.
float distance_of(int quality) {
  if (quality >= 100) return 0.0f;
  if (quality >= 30) return 0.1f + static_cast<float>(100 - quality) * 0.09f;
  // Qualities below 5 map past libjxl's largest distance, 25: held there.
  return std::min(25.0f, 6.4f + static_cast<float>(std::pow(2.5, (30 - quality) / 5.0) / 6.25));
}

constexpr int kJxlQuality = 90;

// A metadata box of the output: EXIF goes in an Exif box after a 4-byte offset to its TIFF header (0).
std::string exif_box(const std::string& exif) { return std::string(4, '\0') + exif; }

// An encoder, destroyed when it goes; libjxl's stderr muted meanwhile (in the rsz program).
class Encoder {
 public:
  Encoder(const Jxl& j, const std::string& path) : j_(j) {
    enc_ = j_.encoder_create(nullptr);
    if (enc_ == nullptr) fail(ErrorCode::Io, path, "cannot write JPEG XL: out of memory");
  }
  ~Encoder() { j_.encoder_destroy(enc_); }
  Encoder(const Encoder&) = delete;
  Encoder& operator=(const Encoder&) = delete;
  JxlEncoder* get() const { return enc_; }

 private:
  const Jxl& j_;
  CodecStderrMute mute_;
  JxlEncoder* enc_ = nullptr;
};

void check_encode(const std::string& path, JxlEncoderStatus status, const char* step) {
  if (status != JXL_ENC_SUCCESS) fail(ErrorCode::Io, path, std::string("cannot write JPEG XL (") + step + ")");
}

// 8- or 16-bit gray, gray + alpha, RGB or RGBA through libjxl's encoder: lossy at a Butteraugli distance from
// options.quality (0: 90, distance 1, as cjxl), lossless (options.lossless, or quality 100: the samples themselves).
// The colour is the ICC profile where it fits the pixels, sRGB otherwise; EXIF and XMP go in Exif and xml boxes.
std::vector<std::uint8_t> encode_jxl(const Codec& codec, const std::string& path, const Image& src,
                                     const ImageWriteOptions& options) {
  const Jxl& j = jxl();
  if (!j.error.empty()) fail(ErrorCode::Io, path, std::string("cannot write ") + codec.display_name + ": " + j.error);
  const Encoder e(j, path);
  const bool alpha = src.channels == 2 || src.channels == 4;
  const bool deep = src.bit_depth == 16;
  const int quality = options.quality > 0 ? options.quality : kJxlQuality;
  const bool lossless = options.lossless || quality >= 100;
  check_encode(path, j.encoder_runner(e.get(), run_on_pool, nullptr), "runner");
  const bool boxes = !src.exif.empty() || !src.xmp.empty();
  if (boxes) check_encode(path, j.use_boxes(e.get()), "boxes");
  JxlBasicInfo info;
  j.init_basic_info(&info);
  info.xsize = static_cast<std::uint32_t>(src.width);
  info.ysize = static_cast<std::uint32_t>(src.height);
  info.bits_per_sample = deep ? 16 : 8;
  info.num_color_channels = src.channels <= 2 ? 1 : 3;
  info.num_extra_channels = alpha ? 1 : 0;
  info.alpha_bits = alpha ? info.bits_per_sample : 0;
  info.uses_original_profile = lossless ? JXL_TRUE : JXL_FALSE;
  check_encode(path, j.set_basic_info(e.get(), &info), "basic info");
  if (alpha) {
    JxlExtraChannelInfo extra;
    j.init_extra(JXL_CHANNEL_ALPHA, &extra);
    extra.bits_per_sample = info.bits_per_sample;
    check_encode(path, j.set_extra(e.get(), 0, &extra), "alpha");
  }
  // A profile lcms2 cannot read is left out (as the PNG writer leaves out a malformed one): sRGB is written.
  if (profile_fits(src.icc_profile, src.channels) && profile_channels(src.icc_profile) == (src.channels <= 2 ? 1 : 3)) {
    check_encode(path,
                 j.set_icc(e.get(), reinterpret_cast<const std::uint8_t*>(src.icc_profile.data()), src.icc_profile.size()),
                 "ICC profile");
  } else {
    JxlColorEncoding colour;
    j.srgb(&colour, src.channels <= 2 ? JXL_TRUE : JXL_FALSE);
    check_encode(path, j.set_color(e.get(), &colour), "colour");
  }
  JxlEncoderFrameSettings* settings = j.frame_settings(e.get(), nullptr);
  if (settings == nullptr) fail(ErrorCode::Io, path, "cannot write JPEG XL: out of memory");
  if (lossless) {
    check_encode(path, j.set_lossless(settings, JXL_TRUE), "lossless");
  } else {
    check_encode(path, j.set_distance(settings, distance_of(quality)), "quality");
  }
  if (!src.exif.empty()) {
    const std::string box = exif_box(src.exif);
    check_encode(path, j.add_box(e.get(), "Exif", reinterpret_cast<const std::uint8_t*>(box.data()), box.size(), 0),
                 "EXIF");
  }
  if (!src.xmp.empty()) {
    check_encode(path,
                 j.add_box(e.get(), "xml ", reinterpret_cast<const std::uint8_t*>(src.xmp.data()), src.xmp.size(), 0),
                 "XMP");
  }
  const JxlPixelFormat format{static_cast<std::uint32_t>(src.channels), deep ? JXL_TYPE_UINT16 : JXL_TYPE_UINT8,
                              JXL_NATIVE_ENDIAN, 0};
  const void* pixels = deep ? static_cast<const void*>(src.data16.data()) : src.data8.data();
  const std::size_t size = static_cast<std::size_t>(src.width * src.height * src.channels) * (deep ? 2 : 1);
  check_encode(path, j.add_frame(settings, &format, pixels, size), "frame");
  j.encoder_close(e.get());
  std::vector<std::uint8_t> bytes(std::max<std::size_t>(size / 4, 4096));
  std::uint8_t* next = bytes.data();
  std::size_t left = bytes.size();
  for (;;) {
    const JxlEncoderStatus status = j.process_output(e.get(), &next, &left);
    if (status == JXL_ENC_SUCCESS) break;
    if (status != JXL_ENC_NEED_MORE_OUTPUT) check_encode(path, status, "encode");
    const std::size_t used = static_cast<std::size_t>(next - bytes.data());
    bytes.resize(bytes.size() * 2);
    next = bytes.data() + used;
    left = bytes.size() - used;
  }
  bytes.resize(static_cast<std::size_t>(next - bytes.data()));
  return bytes;
}

}  // namespace

Codec jxl_codec() {
  Codec c;
  c.format = ImageFormat::Jxl;
  c.name = "jxl";
  c.display_name = "JPEG XL";
  c.family = "JPEG XL";
  c.extensions = {".jxl", nullptr};
  c.sniff = sniff_jxl;
  c.probe = probe_jxl;
  c.info = info_from_header;
  c.decode = read_jxl;
  c.metadata_read = kIcc | kExif | kXmp;
  c.encode = encode_jxl;
  c.depths = kWrites8 | kWrites16;
  c.channels = kGray | kGrayAlpha | kRgb | kRgba;
  c.max_side = 1 << 30;  // JPEG XL's limit (libjxl's level 10)
  c.max_side_reason = "";
  c.metadata_written = kIcc | kExif | kXmp;
  return c;
}

}  // namespace rsz::io::detail
