// PNG through libpng: read from the file as libpng asks for its bytes, written to memory.
//
// libpng reports errors by longjmp. Every libpng call therefore happens inside small C-style functions
// (run_png_read, run_png_write) whose frames hold no C++ object with a destructor; all state lives in plain structs
// owned by the C++ caller, and the only callbacks (input, output, allocation) catch everything themselves and turn
// failures into png_error, so no C++ exception ever crosses a libpng frame and no longjmp ever skips a destructor.
#include <png.h>
#if defined(RSZ_HAVE_LIBDEFLATE)
#include <libdeflate.h>
#endif

#include <algorithm>
#include <csetjmp>
#include <cstring>
#include <limits>
#include <memory>
#include <new>

#include "codecs/codec.h"
#include "image_internal.h"

namespace rsz::io::detail {
namespace {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "rsz::io swaps PNG's big-endian 16-bit samples to host order assuming a little-endian host");

constexpr std::size_t kMessageSize = 200;
constexpr int kFastZlibLevel = 2;
constexpr int kFastFilter = PNG_FILTER_SUB;

void copy_message(char* out, const char* message) {
  std::strncpy(out, message != nullptr ? message : "unknown libpng error", kMessageSize - 1);
  out[kMessageSize - 1] = '\0';
}

// ---------------------------------------------------------------------------------------------------------------
// Reading

enum class ReadStatus { Ok, LibpngError, TooLarge, OutOfMemory };

struct PngReadJob {
  // In.
  FileSource* source = nullptr;
  bool header_only = false;
  std::int64_t max_pixels = 0;
  Image* image = nullptr;  // filled when !header_only
  // State and out.
  bool ran_out = false;  // the file ended before libpng was done
  int read_error = 0;    // the errno of a failed read
  std::uint32_t width = 0;
  std::uint32_t height = 0;
  int channels = 0;
  int bit_depth = 0;
  bool interlaced = false;
  std::size_t read_after_rows = 0;  // bytes libpng asked for once every row was decoded
  png_bytep* rows = nullptr;  // owned by the caller (freed with delete[])
  char message[kMessageSize] = {};
};

void on_png_error(png_structp png, png_const_charp message) {
  auto* job = static_cast<PngReadJob*>(png_get_error_ptr(png));
  if (job != nullptr) copy_message(job->message, message);
  png_longjmp(png, 1);
}

void on_png_warning(png_structp, png_const_charp) {}

// After the last row libpng inflates whatever compressed data is left in the IDAT stream, only to discard it: a
// small file can hold gigabytes of such data (a decompression bomb that takes minutes). Legitimate files end their
// stream within a few bytes of the last row, so reading more than this once the rows are done is refused.
constexpr std::size_t kMaxReadAfterRows = std::size_t{128} << 10;

void read_from_file(png_structp png, png_bytep out, png_size_t length) {
  auto* job = static_cast<PngReadJob*>(png_get_io_ptr(png));
  const bool rows_done = job->height > 0 && (job->interlaced ? png_get_current_pass_number(png) >= 7
                                                             : png_get_current_row_number(png) >= job->height);
  if (rows_done && !job->header_only) {
    job->read_after_rows += length;
    if (job->read_after_rows > kMaxReadAfterRows) {
      png_error(png, "more than 128 KiB of extra compressed data follow the last row (a decompression bomb?)");
    }
  }
  if (job->source->read(out, length) < length) {
    job->read_error = job->source->error();
    job->ran_out = job->read_error == 0;
    png_error(png, job->ran_out ? "the file ends early" : "the file cannot be read");
  }
}

// Allocates the pixel buffer and the row pointers for the job's size; false when out of memory.
bool allocate_pixels(PngReadJob* job) noexcept {
  try {
    Image& image = *job->image;
    image.width = job->width;
    image.height = job->height;
    image.channels = job->channels;
    image.bit_depth = job->bit_depth;
    const std::size_t row_samples = std::size_t{job->width} * static_cast<std::size_t>(job->channels);
    const std::size_t samples = row_samples * job->height;
    job->rows = new png_bytep[job->height];
    if (job->bit_depth == 16) {
      image.data16.resize(samples);  // every row is decoded into it
      for (std::uint32_t y = 0; y < job->height; ++y) {
        job->rows[y] = reinterpret_cast<png_bytep>(image.data16.data() + row_samples * y);
      }
    } else {
      image.data8.resize(samples);
      for (std::uint32_t y = 0; y < job->height; ++y) job->rows[y] = image.data8.data() + row_samples * y;
    }
    return true;
  } catch (...) {
    return false;
  }
}

// The only frame with setjmp: plain data only.
// Copies metadata bytes (a profile, EXIF) out of libpng's buffers; false when out of memory.
bool copy_profile(std::string& to, const png_bytep profile, png_uint_32 length) noexcept {
  try {
    to.assign(reinterpret_cast<const char*>(profile), length);
    return true;
  } catch (...) {
    return false;
  }
}

// The header, the transforms and the metadata, in the frame of a caller that called setjmp (this frame holds plain
// data only): Ok, TooLarge, OutOfMemory, or LibpngError for a layout rsz does not take.
ReadStatus read_header(PngReadJob* job, png_structp png, png_infop info) {
  png_set_read_fn(png, job, read_from_file);
  // rsz enforces its own limit; lift libpng's default 1,000,000 x 1,000,000 cap so that ours is the one reported.
  png_set_user_limits(png, 0x7fffffffU, 0x7fffffffU);
  png_read_info(png, info);

  job->width = png_get_image_width(png, info);
  job->height = png_get_image_height(png, info);
  const std::uint64_t pixels = std::uint64_t{job->width} * job->height;
  if (pixels > static_cast<std::uint64_t>(job->max_pixels)) return ReadStatus::TooLarge;

  // Palette -> RGB, gray below 8 bits -> 8 bits, tRNS -> an alpha channel, 16-bit samples in host order.
  png_set_expand(png);
  if (png_get_bit_depth(png, info) == 16) png_set_swap(png);
  png_set_interlace_handling(png);
  png_read_update_info(png, info);
  job->channels = png_get_channels(png, info);
  job->bit_depth = png_get_bit_depth(png, info);
  job->interlaced = png_get_interlace_type(png, info) != PNG_INTERLACE_NONE;
  if (job->header_only) return ReadStatus::Ok;
  png_charp name = nullptr;
  int compression = 0;
  png_bytep profile = nullptr;
  png_uint_32 length = 0;
  if (png_get_iCCP(png, info, &name, &compression, &profile, &length) != 0 && profile != nullptr && length > 0 &&
      !copy_profile(job->image->icc_profile, profile, length)) {
    return ReadStatus::OutOfMemory;
  }
  png_bytep exif = nullptr;
  png_uint_32 exif_length = 0;
  if (png_get_eXIf_1(png, info, &exif_length, &exif) != 0 && exif != nullptr && exif_length > 0 &&
      !copy_profile(job->image->exif, exif, exif_length)) {
    return ReadStatus::OutOfMemory;
  }
  // XMP: the iTXt chunk "XML:com.adobe.xmp" before the image data (where rsz, exiftool and Photoshop put it; libpng
  // holds at most 8 MB of a decompressed chunk).
  png_textp texts = nullptr;
  int text_count = 0;
  png_get_text(png, info, &texts, &text_count);
  for (int i = 0; i < text_count; ++i) {
    const png_text& t = texts[i];
    if (t.key == nullptr || t.text == nullptr || std::strcmp(t.key, "XML:com.adobe.xmp") != 0) continue;
    const std::size_t size = t.compression >= PNG_ITXT_COMPRESSION_NONE ? t.itxt_length : t.text_length;
    if (size > 0 && !copy_profile(job->image->xmp, reinterpret_cast<png_bytep>(t.text),
                                  static_cast<png_uint_32>(size))) {
      return ReadStatus::OutOfMemory;
    }
    break;
  }
  if ((job->bit_depth != 8 && job->bit_depth != 16) || job->channels < 1 || job->channels > 4 ||
      png_get_rowbytes(png, info) != std::size_t{job->width} * static_cast<std::size_t>(job->channels) *
                                         static_cast<std::size_t>(job->bit_depth / 8)) {
    copy_message(job->message, "unexpected sample layout after expansion");
    return ReadStatus::LibpngError;
  }
  return ReadStatus::Ok;
}

ReadStatus run_png_read(PngReadJob* job) {
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, job, on_png_error, on_png_warning);
  if (png == nullptr) return ReadStatus::OutOfMemory;
  png_infop info = png_create_info_struct(png);
  if (info == nullptr) {
    png_destroy_read_struct(&png, nullptr, nullptr);
    return ReadStatus::OutOfMemory;
  }
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_read_struct(&png, &info, nullptr);
    return ReadStatus::LibpngError;
  }
  const ReadStatus status = read_header(job, png, info);
  if (status != ReadStatus::Ok || job->header_only) {
    png_destroy_read_struct(&png, &info, nullptr);
    return status;
  }
  if (!allocate_pixels(job)) {
    png_destroy_read_struct(&png, &info, nullptr);
    return ReadStatus::OutOfMemory;
  }
  png_read_image(png, job->rows);
  // No png_read_end: the chunks after the image data (text, time) are not used, and skipping them spares reading an
  // unbounded tail.
  png_destroy_read_struct(&png, &info, nullptr);
  return ReadStatus::Ok;
}

// Rows read as they are asked for (PngRows): libpng's state lives between the calls, each of which has its own
// setjmp frame.
struct PngRowState {
  PngReadJob job;
  png_structp png = nullptr;
  png_infop info = nullptr;
};

ReadStatus start_png_rows(PngRowState* s) {
  s->png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &s->job, on_png_error, on_png_warning);
  if (s->png == nullptr) return ReadStatus::OutOfMemory;
  s->info = png_create_info_struct(s->png);
  if (s->info == nullptr) return ReadStatus::OutOfMemory;
  if (setjmp(png_jmpbuf(s->png))) return ReadStatus::LibpngError;
  return read_header(&s->job, s->png, s->info);
}

ReadStatus read_png_rows(PngRowState* s, std::uint8_t* dst, std::int64_t count, std::size_t row_bytes) {
  if (setjmp(png_jmpbuf(s->png))) return ReadStatus::LibpngError;
  for (std::int64_t k = 0; k < count; ++k) png_read_row(s->png, dst + row_bytes * static_cast<std::size_t>(k), nullptr);
  return ReadStatus::Ok;
}

void destroy_png_rows(PngRowState* s) {
  if (s->png != nullptr) png_destroy_read_struct(&s->png, s->info != nullptr ? &s->info : nullptr, nullptr);
  s->png = nullptr;
  s->info = nullptr;
}

// Throws what a read that ended with `status` (not Ok) means.
[[noreturn]] void fail_png(const std::string& path, ReadStatus status, const PngReadJob& job) {
  switch (status) {
    case ReadStatus::Ok: break;
    case ReadStatus::TooLarge: {
      ImageReadOptions limit;
      limit.max_pixels = job.max_pixels;
      check_pixel_limit(path, job.width, job.height, limit);
      throw InternalError("rsz::io::read_png: pixel limit inconsistency");
    }
    case ReadStatus::OutOfMemory:
      fail(ErrorCode::Io, path, "cannot read: out of memory for a " + size_text(job.width, job.height) + " PNG image");
    case ReadStatus::LibpngError:
      if (job.read_error != 0) fail(ErrorCode::Io, path, "cannot read: " + system_message(job.read_error));
      if (job.ran_out) {
        fail(ErrorCode::Format, path,
             "the PNG file is truncated: it ends after " + std::to_string(job.source->position()) +
                 " bytes, before the image is complete; a complete PNG file is required");
      }
      fail(ErrorCode::Format, path,
           std::string("not a valid PNG file: ") + job.message + "; a PNG file that libpng can decode is required");
  }
  throw InternalError("rsz::io::read_png: unknown status");
}

void run_read_job(const std::string& path, PngReadJob& job) {
  const ReadStatus status = run_png_read(&job);
  delete[] job.rows;
  job.rows = nullptr;
  if (status != ReadStatus::Ok) fail_png(path, status, job);
}

class PngRows final : public ImageRows {
 public:
  PngRows(const std::string& path, std::shared_ptr<const void> keep, FileSource& source,
          const ImageReadOptions& options)
      : path_(path), keep_(std::move(keep)) {
    state_.job.source = &source;
    state_.job.max_pixels = options.max_pixels;
    state_.job.image = &header_;
    const ReadStatus status = start_png_rows(&state_);
    if (status != ReadStatus::Ok) {
      destroy_png_rows(&state_);
      fail_png(path_, status, state_.job);
    }
    header_.width = state_.job.width;
    header_.height = state_.job.height;
    header_.channels = state_.job.channels;
    header_.bit_depth = state_.job.bit_depth;
    row_bytes_ = static_cast<std::size_t>(header_.width) * static_cast<std::size_t>(header_.channels) *
                 static_cast<std::size_t>(header_.bit_depth / 8);
  }
  ~PngRows() override { destroy_png_rows(&state_); }
  PngRows(const PngRows&) = delete;
  PngRows& operator=(const PngRows&) = delete;
  // Rows come in order without alpha (the in-place view has none): not interlaced, 1 or 3 channels.
  bool in_order() const { return !state_.job.interlaced && (header_.channels == 1 || header_.channels == 3); }

 private:
  void decode(std::uint8_t* dst, std::int64_t count) override {
    const ReadStatus status = read_png_rows(&state_, dst, count, row_bytes_);
    if (status != ReadStatus::Ok) fail_png(path_, status, state_.job);
  }

  std::string path_;
  std::shared_ptr<const void> keep_;  // owns the file and the source
  PngRowState state_;
  std::size_t row_bytes_ = 0;
};

// ---------------------------------------------------------------------------------------------------------------
// Writing

struct PngWriteJob {
  const Image* image = nullptr;
  int zlib_level = 6;
  int filters = PNG_ALL_FILTERS;
  std::vector<std::uint8_t>* out = nullptr;
  const RowFeed* feed = nullptr;
  png_bytep* rows = nullptr;  // room for one band of row pointers, owned by the caller
  bool out_of_memory = false;
  bool feed_failed = false;
  char message[kMessageSize] = {};
};

void on_png_write_error(png_structp png, png_const_charp message) {
  auto* job = static_cast<PngWriteJob*>(png_get_error_ptr(png));
  if (job != nullptr) copy_message(job->message, message);
  png_longjmp(png, 1);
}

bool append_bytes(PngWriteJob* job, const png_bytep data, png_size_t length) noexcept {
  try {
    job->out->insert(job->out->end(), data, data + length);
    return true;
  } catch (...) {
    return false;
  }
}

void write_to_memory(png_structp png, png_bytep data, png_size_t length) {
  auto* job = static_cast<PngWriteJob*>(png_get_io_ptr(png));
  if (!append_bytes(job, data, length)) {
    job->out_of_memory = true;
    png_error(png, "out of memory");
  }
}

void flush_memory(png_structp) {}

bool run_png_write(PngWriteJob* job) {
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, job, on_png_write_error, on_png_warning);
  if (png == nullptr) {
    job->out_of_memory = true;
    return false;
  }
  png_infop info = png_create_info_struct(png);
  if (info == nullptr) {
    png_destroy_write_struct(&png, nullptr);
    job->out_of_memory = true;
    return false;
  }
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    return false;
  }
  png_set_write_fn(png, job, write_to_memory, flush_memory);
  // libpng refuses sides over 1000000 by default; PNG itself allows 2^31 - 1 (the limit encode_png states).
  png_set_user_limits(png, 0x7fffffffU, 0x7fffffffU);
  const Image& image = *job->image;
  static const int kColorTypes[] = {PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA, PNG_COLOR_TYPE_RGB,
                                    PNG_COLOR_TYPE_RGB_ALPHA};
  png_set_IHDR(png, info, static_cast<png_uint_32>(image.width), static_cast<png_uint_32>(image.height),
               image.bit_depth, kColorTypes[image.channels - 1], PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
               PNG_FILTER_TYPE_DEFAULT);
  png_set_compression_level(png, job->zlib_level);
  png_set_filter(png, PNG_FILTER_TYPE_BASE, job->filters);
  if (profile_fits(image.icc_profile, image.channels)) {
    png_set_benign_errors(png, 1);  // a profile libpng finds fault with is left out, not a failed write
    png_set_iCCP(png, info, "ICC Profile", PNG_COMPRESSION_TYPE_BASE,
                 reinterpret_cast<png_const_bytep>(image.icc_profile.data()),
                 static_cast<png_uint_32>(image.icc_profile.size()));
  }
  if (!image.exif.empty() && image.exif.size() < 0x7fffffffU) {
    png_set_eXIf_1(png, info, static_cast<png_uint_32>(image.exif.size()),
                   reinterpret_cast<png_bytep>(const_cast<char*>(image.exif.data())));  // libpng copies it
  }
  png_text xmp{};
  if (!image.xmp.empty()) {
    xmp.compression = PNG_ITXT_COMPRESSION_NONE;
    xmp.key = const_cast<png_charp>("XML:com.adobe.xmp");
    xmp.text = const_cast<png_charp>(image.xmp.c_str());
    xmp.itxt_length = image.xmp.size();
    png_set_text(png, info, &xmp, 1);
  }
  png_write_info(png, info);
  if (image.bit_depth == 16) png_set_swap(png);
  // Band by band as the feed produces them (libpng copies each row before transforming it: they stay unmodified).
  const std::size_t row_bytes = static_cast<std::size_t>(image.width) * static_cast<std::size_t>(image.channels) *
                                static_cast<std::size_t>(image.bit_depth / 8);
  const std::int64_t band = job->feed->band_rows > 0 ? job->feed->band_rows : image.height;
  for (std::int64_t y = 0; y < image.height; y += band) {
    const std::int64_t count = std::min(band, image.height - y);
    const std::uint8_t* rows = job->feed->band(y, count);
    if (rows == nullptr) {
      job->feed_failed = true;
      png_destroy_write_struct(&png, &info);
      return false;
    }
    for (std::int64_t k = 0; k < count; ++k) {
      job->rows[k] = const_cast<png_bytep>(rows) + row_bytes * static_cast<std::size_t>(k);
    }
    png_write_rows(png, job->rows, static_cast<png_uint_32>(count));
  }
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return true;
}

}  // namespace

Image read_png(const Codec&, const std::string& path, FileSource& source, const ImageReadOptions& options) {
  Image image;
  PngReadJob job;
  job.source = &source;
  job.max_pixels = options.max_pixels;
  job.image = &image;
  run_read_job(path, job);
  return image;
}

ImageInfo read_png_info(const Codec& codec, const std::string& path, FileSource& source,
                        const ImageReadOptions& options) {
  PngReadJob job;
  job.source = &source;
  job.header_only = true;
  job.max_pixels = options.max_pixels;
  run_read_job(path, job);
  ImageInfo info;
  info.width = job.width;
  info.height = job.height;
  info.channels = job.channels;
  info.bit_depth = job.bit_depth;
  info.format = codec.name;
  info.rows_in_order = !job.interlaced && (job.channels == 1 || job.channels == 3);  // as PngRows::in_order
  return info;
}

std::unique_ptr<ImageRows> open_png_rows(const Codec&, const std::string& path, std::shared_ptr<const void> keep,
                                         const FileBytes&, FileSource* source, const ImageReadOptions& options) {
  if (source == nullptr) throw InternalError("rsz::io::open_png_rows: no file source");
  auto rows = std::make_unique<PngRows>(path, std::move(keep), *source, options);
  if (!rows->in_order()) return nullptr;
  return rows;
}

#if defined(RSZ_HAVE_LIBDEFLATE)
// The default PNG (no --png-compression): rows filtered with Sub and compressed by libdeflate at level 1, which
// gives smaller files than zlib's level 2 (the default before) in about half the time (a 960x540 16-bit RGB output:
// 1,345,331 bytes in 18 ms against 1,350,045 in 42). libpng cannot use another deflate, so the few chunks are
// written here: IHDR, iCCP, eXIf and the XMP iTXt as libpng writes them, one IDAT, IEND, each with its CRC-32.
// Outputs of more than kPngDeflateMaxBytes of rows (the filtered rows are held whole, then compressed into the file's
// buffer) go through libpng, band by band.
std::uint32_t get_u32(const char* at) {
  const auto* b = reinterpret_cast<const unsigned char*>(at);
  return static_cast<std::uint32_t>(b[0]) << 24 | static_cast<std::uint32_t>(b[1]) << 16 |
         static_cast<std::uint32_t>(b[2]) << 8 | b[3];
}

// Whether an ICC profile passes the checks libpng makes before writing one (png_icc_check_length and _header):
// its stated length is its size, the 'acsp' signature, a colour space of the image's (profile_fits), an XYZ or Lab
// connection space, a rendering intent of 0 to 3 and a tag table inside the profile. libpng leaves out a profile
// that fails them (a benign error), and so does this writer.
bool profile_is_writable(const std::string& profile, int channels) {
  if (!profile_fits(profile, channels) || profile.size() < 132 || profile.size() > 0x7fffff00U) return false;
  const char* p = profile.data();
  const std::string pcs(p + 20, 4);
  return get_u32(p) == profile.size() && std::memcmp(p + 36, "acsp", 4) == 0 && (pcs == "XYZ " || pcs == "Lab ") &&
         get_u32(p + 64) <= 3 && (get_u32(p) - 132) / 12 >= get_u32(p + 128);
}

void put_u32(std::uint8_t* at, std::uint32_t v) {
  at[0] = static_cast<std::uint8_t>(v >> 24);
  at[1] = static_cast<std::uint8_t>(v >> 16);
  at[2] = static_cast<std::uint8_t>(v >> 8);
  at[3] = static_cast<std::uint8_t>(v);
}

// Appends a chunk: its length, type, the `size` bytes at `data` and its CRC.
void put_chunk(std::vector<std::uint8_t>& out, const char type[4], const std::uint8_t* data, std::size_t size) {
  const std::size_t start = out.size();
  out.resize(start + 8);
  put_u32(out.data() + start, static_cast<std::uint32_t>(size));
  std::memcpy(out.data() + start + 4, type, 4);
  if (size > 0) out.insert(out.end(), data, data + size);
  const std::uint32_t crc = static_cast<std::uint32_t>(libdeflate_crc32(0, out.data() + start + 4, size + 4));
  out.resize(out.size() + 4);
  put_u32(out.data() + out.size() - 4, crc);
}

struct CompressorDeleter {
  void operator()(libdeflate_compressor* c) const { libdeflate_free_compressor(c); }
};

std::vector<std::uint8_t> encode_png_deflate(const std::string& path, const Image& image, const RowFeed& feed,
                                             std::size_t row_bytes) {
  const auto height = static_cast<std::size_t>(image.height);
  const std::size_t bpp = static_cast<std::size_t>(image.channels) * static_cast<std::size_t>(image.bit_depth / 8);
  // Sub filter over big-endian samples: each byte minus the byte one pixel before it.
  std::vector<std::uint8_t> filtered(height * (row_bytes + 1));
  std::vector<std::uint8_t> big_endian(image.bit_depth == 16 ? row_bytes : 0);
  const std::int64_t band = feed.band_rows > 0 ? feed.band_rows : image.height;
  for (std::int64_t y = 0; y < image.height; y += band) {
    const std::int64_t count = std::min(band, image.height - y);
    const std::uint8_t* rows = feed.band(y, count);
    if (rows == nullptr) {
      if (feed.error != nullptr && *feed.error) std::rethrow_exception(*feed.error);
      fail(ErrorCode::Io, path, "cannot encode the PNG image: its rows could not be computed");
    }
    for (std::int64_t k = 0; k < count; ++k) {
      const std::uint8_t* row = rows + row_bytes * static_cast<std::size_t>(k);
      if (image.bit_depth == 16) {
        for (std::size_t i = 0; i < row_bytes; i += 2) {
          big_endian[i] = row[i + 1];
          big_endian[i + 1] = row[i];
        }
        row = big_endian.data();
      }
      std::uint8_t* o = filtered.data() + static_cast<std::size_t>(y + k) * (row_bytes + 1);
      o[0] = 1;  // Sub
      for (std::size_t i = 0; i < std::min(bpp, row_bytes); ++i) o[1 + i] = row[i];
      for (std::size_t i = bpp; i < row_bytes; ++i) o[1 + i] = static_cast<std::uint8_t>(row[i] - row[i - bpp]);
    }
  }
  const std::unique_ptr<libdeflate_compressor, CompressorDeleter> compressor(libdeflate_alloc_compressor(1));
  if (!compressor) fail(ErrorCode::Io, path, "cannot write: out of memory while encoding the PNG image");
  std::vector<std::uint8_t> out;
  static const std::uint8_t kSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  out.insert(out.end(), kSignature, kSignature + 8);
  std::uint8_t header[13] = {};
  put_u32(header, static_cast<std::uint32_t>(image.width));
  put_u32(header + 4, static_cast<std::uint32_t>(image.height));
  static const std::uint8_t kColorTypes[] = {0, 4, 2, 6};  // gray, gray + alpha, RGB, RGBA
  header[8] = static_cast<std::uint8_t>(image.bit_depth);
  header[9] = kColorTypes[image.channels - 1];
  put_chunk(out, "IHDR", header, sizeof header);
  if (profile_is_writable(image.icc_profile, image.channels)) {
    // name, NUL, compression method 0, the zlib stream of the profile
    static const char kName[] = "ICC Profile";
    std::vector<std::uint8_t> chunk(kName, kName + sizeof kName);
    chunk.push_back(0);
    const std::size_t at = chunk.size();
    const std::size_t room = libdeflate_zlib_compress_bound(compressor.get(), image.icc_profile.size());
    chunk.resize(at + room);
    const std::size_t packed = libdeflate_zlib_compress(compressor.get(), image.icc_profile.data(),
                                                        image.icc_profile.size(), chunk.data() + at, room);
    if (packed == 0) fail(ErrorCode::Io, path, "cannot encode the PNG image: deflate failed");
    chunk.resize(at + packed);
    put_chunk(out, "iCCP", chunk.data(), chunk.size());
  }
  if (!image.exif.empty() && image.exif.size() < 0x7fffffffU) {
    put_chunk(out, "eXIf", reinterpret_cast<const std::uint8_t*>(image.exif.data()), image.exif.size());
  }
  if (!image.xmp.empty() && image.xmp.size() < 0x7fffff00U) {
    // keyword, NUL, compression flag 0, method 0, empty language tag and translated keyword (NULs), the text
    static const char kKeyword[] = "XML:com.adobe.xmp";
    std::vector<std::uint8_t> text(kKeyword, kKeyword + sizeof kKeyword);
    text.insert(text.end(), {0, 0, 0, 0});
    text.insert(text.end(), image.xmp.begin(), image.xmp.end());
    put_chunk(out, "iTXt", text.data(), text.size());
  }
  const std::size_t bound = libdeflate_zlib_compress_bound(compressor.get(), filtered.size());
  const std::size_t idat = out.size();
  out.resize(idat + 8 + bound);
  const std::size_t size =
      libdeflate_zlib_compress(compressor.get(), filtered.data(), filtered.size(), out.data() + idat + 8, bound);
  if (size == 0 || size > 0x7fffffffU) fail(ErrorCode::Io, path, "cannot encode the PNG image: deflate failed");
  filtered = {};
  // The IDAT chunk around the compressed bytes, which were written in place.
  out.resize(idat + 8 + size + 4);
  put_u32(out.data() + idat, static_cast<std::uint32_t>(size));
  std::memcpy(out.data() + idat + 4, "IDAT", 4);
  put_u32(out.data() + idat + 8 + size,
          static_cast<std::uint32_t>(libdeflate_crc32(0, out.data() + idat + 4, size + 4)));
  put_chunk(out, "IEND", nullptr, 0);
  return out;
}
#endif

std::vector<std::uint8_t> encode_png(const Codec&, const std::string& path, const Image& image,
                                     const ImageWriteOptions& options, const RowFeed& feed) {
  const int compression = options.png_compression;
  constexpr std::int64_t kMaxSide = 0x7fffffff;  // PNG's limit on width and height
  if (image.width > kMaxSide || image.height > kMaxSide) {
    fail(ErrorCode::Format, path,
         "the image is " + size_text(image.width, image.height) +
             " pixels, larger than PNG allows; width and height of at most 2147483647 are allowed");
  }
  const std::size_t row_bytes = static_cast<std::size_t>(image.width) * static_cast<std::size_t>(image.channels) *
                                static_cast<std::size_t>(image.bit_depth / 8);
#if defined(RSZ_HAVE_LIBDEFLATE)
  if (compression < 0 && row_bytes * static_cast<std::size_t>(image.height) <= kPngDeflateMaxBytes) {
    return encode_png_deflate(path, image, feed, row_bytes);
  }
#endif
  std::vector<png_bytep> rows(static_cast<std::size_t>(feed.band_rows > 0 ? std::min(feed.band_rows, image.height)
                                                                          : image.height));
  std::vector<std::uint8_t> out;
  out.reserve(std::min<std::size_t>(row_bytes * static_cast<std::size_t>(image.height) / 2, std::size_t{64} << 20) +
              1024);
  PngWriteJob job;
  job.image = &image;
  // The default: a low zlib level over rows filtered with Sub, whose deltas suit photographs; a level chosen with
  // --png-compression gets libpng's adaptive choice among all filters per row.
  job.zlib_level = compression < 0 ? kFastZlibLevel : compression;
  job.filters = compression < 0 ? kFastFilter : PNG_ALL_FILTERS;
  job.out = &out;
  job.feed = &feed;
  job.rows = rows.data();
  if (!run_png_write(&job)) {
    if (job.feed_failed && feed.error != nullptr && *feed.error) std::rethrow_exception(*feed.error);
    if (job.out_of_memory) fail(ErrorCode::Io, path, "cannot write: out of memory while encoding the PNG image");
    fail(ErrorCode::Io, path, std::string("cannot encode the PNG image: ") + job.message);
  }
  return out;
}

}  // namespace rsz::io::detail
