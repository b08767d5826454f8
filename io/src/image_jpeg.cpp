// JPEG through libjpeg-turbo, from and to memory.
//
// Decoding: the header probe (codecs/jpeg.cpp) first walks the whole file, so a truncated file or an image above
// max_pixels is refused before libjpeg allocates anything. libjpeg then decodes with its defaults (accurate integer
// IDCT, fancy upsampling) to RGB or gray; CMYK (Adobe, inverted) becomes RGB as c = k - ((255 - c) * k >> 8) per
// channel. Rows land straight in the image buffer; with an EXIF orientation other than 1 each decoded row is
// placed where it belongs in the upright image, so no second full-size buffer exists either way. A libjpeg warning
// about lost or damaged data (corrupt data, a premature end of a segment or of the file) makes the file a failed
// input, with libjpeg's text in rsz's one-line message; the warnings libjpeg recovers from exactly (stray bytes
// before a marker, which it skips; an unknown JFIF revision) are dropped, so such files decode as other tools decode
// them. libjpeg never prints.
// Encoding: jpeg_set_defaults + jpeg_set_quality(quality, baseline) for RGB or gray input, 4:2:0 chroma
// subsampling, baseline Huffman tables.
//
// libjpeg reports errors by longjmp. As for libpng, every libjpeg call happens inside C-style functions whose frames
// hold no C++ object with a destructor; allocation happens in a noexcept callback.
#include <csetjmp>
#include <cstddef>
#include <cstdio>  // jpeglib.h needs size_t and FILE declared first
#include <cstdlib>
#include <cstring>
#include <new>

#include <jpeglib.h>
// After jpeglib.h: the message codes.
#include <jerror.h>

#include "codecs/codec.h"
#include "image_internal.h"

namespace rsz::io::detail {
namespace {

struct JpegErrors {
  jpeg_error_mgr mgr;  // first member: libjpeg's err pointer is cast back to JpegErrors
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

[[noreturn]] void on_jpeg_error(j_common_ptr cinfo) {
  auto* errors = reinterpret_cast<JpegErrors*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, errors->message);
  std::longjmp(errors->jump, 1);
}

// Warnings after which libjpeg decodes exactly the pixels the file holds: bytes before a marker that is not one
// (skipped whole; scraped datasets are full of them), and a JFIF revision newer than it knows (the header is read
// all the same). Every other warning means lost or guessed data.
bool is_harmless_warning(int code) { return code == JWRN_EXTRANEOUS_DATA || code == JWRN_JFIF_MAJOR; }

// Warnings (level -1) other than harmless ones are counted and the first one kept; trace messages are dropped.
// Nothing is printed.
void on_jpeg_message(j_common_ptr cinfo, int level) {
  if (level >= 0 || is_harmless_warning(cinfo->err->msg_code)) return;
  auto* errors = reinterpret_cast<JpegErrors*>(cinfo->err);
  if (cinfo->err->num_warnings++ == 0) (*cinfo->err->format_message)(cinfo, errors->message);
}

void init_errors(JpegErrors* errors) {
  jpeg_std_error(&errors->mgr);
  errors->mgr.error_exit = on_jpeg_error;
  errors->mgr.emit_message = on_jpeg_message;
  errors->message[0] = '\0';
}

// ---------------------------------------------------------------------------------------------------------------
// Reading

enum class ReadStatus { Ok, LibjpegError, Warning, SizeMismatch, OutOfMemory, MultiScan };

struct JpegReadJob {
  // In.
  const std::uint8_t* data = nullptr;
  std::size_t size = 0;
  int orientation = 1;
  std::int64_t expected_width = 0;  // the frame header's size
  std::int64_t expected_height = 0;
  int shrink = 1;  // libjpeg's DCT scaling: the image is decoded at 1 / shrink (1, 2, 4 or 8)
  Image* image = nullptr;
  // State.
  std::uint8_t* row = nullptr;  // a decoded row (CMYK or oriented output), owned by the caller (delete[])
  int components = 0;           // samples a decoded pixel has (4 for CMYK)
  int channels = 0;             // samples a pixel of the image has
  std::int64_t width = 0;       // the decoded size (the frame's, or shrunk), as stored (before the orientation)
  std::int64_t height = 0;
  // Out.
  JpegErrors errors{};
};

// Sizes the image for the job (upright), allocating its samples for `rows` rows (the whole height: -1), and the
// scratch row when needed; false when out of memory.
bool allocate_pixels(JpegReadJob* job, bool need_row, std::int64_t rows) noexcept {
  try {
    const Orientation orient(job->orientation, job->width, job->height);
    Image& image = *job->image;
    image.width = orient.out_width;
    image.height = orient.out_height;
    image.channels = job->channels;
    image.bit_depth = 8;
    image.data8.resize(static_cast<std::size_t>(image.width * (rows < 0 ? image.height : rows) * job->channels));
    if (need_row) job->row = new std::uint8_t[static_cast<std::size_t>(job->width * job->components)];
    return true;
  } catch (...) {
    return false;
  }
}

// Converts the decoded row in job.row (CMYK, or a copy for an oriented image) to the image's samples at dst, `step`
// samples apart.
void convert_row(const JpegReadJob& job, std::uint8_t* dst, std::int64_t step) {
  const int c = job.channels;
  const int components = job.components;
  const std::uint8_t* src = job.row;
  for (std::int64_t x = 0; x < job.width; ++x, src += components, dst += step) {
    if (components == 4) {
      const int k = src[3];
      for (int i = 0; i < 3; ++i) dst[i] = static_cast<std::uint8_t>(k - ((255 - src[i]) * k >> 8));
    } else {
      for (int i = 0; i < c; ++i) dst[i] = src[i];
    }
  }
}

// The only frame with setjmp: plain data only.
bool copy_profile(Image* image, const JOCTET* profile, unsigned int length) noexcept {
  try {
    image->icc_profile.assign(reinterpret_cast<const char*>(profile), length);
    return true;
  } catch (...) {
    return false;
  }
}

constexpr char kExifHeader[] = "Exif\0";  // with the terminating NUL: "Exif\0\0", 6 bytes
constexpr std::size_t kExifHeaderSize = 6;
constexpr char kXmpHeader[] = "http://ns.adobe.com/xap/1.0/";  // followed by a NUL
constexpr std::size_t kXmpHeaderSize = sizeof kXmpHeader;      // 29, the NUL included

// Whether an EXIF or XMP payload is written: an APP1 segment holds at most 65533 bytes, header included (larger EXIF
// or XMP, rare: a huge thumbnail, is left out).
bool app1_fits(const std::string& payload, std::size_t header_size) {
  return !payload.empty() && payload.size() + header_size <= 65533;
}

// The EXIF and XMP of the APP1 segments; `reset_orientation`: the pixels were turned upright, so the EXIF
// orientation becomes 1. False when out of memory.
bool copy_app1(Image* image, jpeg_saved_marker_ptr marker, bool reset_orientation) noexcept {
  try {
    for (; marker != nullptr; marker = marker->next) {
      if (marker->marker != JPEG_APP0 + 1) continue;
      const char* data = reinterpret_cast<const char*>(marker->data);
      const std::size_t size = marker->data_length;
      if (image->exif.empty() && size > kExifHeaderSize && std::memcmp(data, kExifHeader, kExifHeaderSize) == 0) {
        image->exif.assign(data + kExifHeaderSize, size - kExifHeaderSize);
        if (reset_orientation) reset_exif_orientation(image->exif);
      } else if (image->xmp.empty() && size > kXmpHeaderSize &&
                 std::memcmp(data, kXmpHeader, kXmpHeaderSize) == 0) {
        image->xmp.assign(data + kXmpHeaderSize, size - kXmpHeaderSize);
      }
    }
    return true;
  } catch (...) {
    return false;
  }
}

// The header, metadata and output setup both readers share, up to jpeg_start_decompress; run under the caller's
// setjmp. Sets the job's components, channels and decoded size.
ReadStatus begin_read(jpeg_decompress_struct* cinfo, JpegReadJob* job) {
  jpeg_create_decompress(cinfo);
  jpeg_mem_src(cinfo, job->data, static_cast<unsigned long>(job->size));
  jpeg_save_markers(cinfo, JPEG_APP0 + 2, 0xFFFF);  // ICC profile chunks
  jpeg_save_markers(cinfo, JPEG_APP0 + 1, 0xFFFF);  // EXIF and XMP
  jpeg_read_header(cinfo, TRUE);
  if (!copy_app1(job->image, cinfo->marker_list, job->orientation != 1)) return ReadStatus::OutOfMemory;
  if (cinfo->num_components != 4) {  // a CMYK file's profile does not describe the RGB pixels rsz makes of it
    JOCTET* profile = nullptr;
    unsigned int length = 0;
    if (jpeg_read_icc_profile(cinfo, &profile, &length) && profile != nullptr) {
      const bool copied = copy_profile(job->image, profile, length);
      std::free(profile);
      if (!copied) return ReadStatus::OutOfMemory;
    }
  }
  if (cinfo->image_width != job->expected_width || cinfo->image_height != job->expected_height) {
    return ReadStatus::SizeMismatch;
  }
  job->components = cinfo->num_components == 4 ? 4 : cinfo->num_components == 1 ? 1 : 3;
  cinfo->out_color_space = job->components == 4 ? JCS_CMYK : job->components == 1 ? JCS_GRAYSCALE : JCS_RGB;
  job->channels = job->components == 1 ? 1 : 3;
  cinfo->scale_num = 1;
  cinfo->scale_denom = static_cast<unsigned int>(job->shrink);
  jpeg_calc_output_dimensions(cinfo);
  job->width = cinfo->output_width;
  job->height = cinfo->output_height;
  return ReadStatus::Ok;
}

ReadStatus run_jpeg_read(JpegReadJob* job) {
  jpeg_decompress_struct cinfo{};
  init_errors(&job->errors);
  cinfo.err = &job->errors.mgr;
  if (setjmp(job->errors.jump)) {
    jpeg_destroy_decompress(&cinfo);
    return ReadStatus::LibjpegError;
  }
  const ReadStatus begun = begin_read(&cinfo, job);
  const bool direct = job->components != 4 && job->orientation == 1;
  if (begun != ReadStatus::Ok || !allocate_pixels(job, !direct, -1)) {
    jpeg_destroy_decompress(&cinfo);
    return begun != ReadStatus::Ok ? begun : ReadStatus::OutOfMemory;
  }
  jpeg_start_decompress(&cinfo);
  const Orientation orient(job->orientation, job->width, job->height);
  const std::size_t row_bytes = static_cast<std::size_t>(job->width) * static_cast<std::size_t>(job->channels);
  while (cinfo.output_scanline < cinfo.output_height) {
    const std::int64_t y = cinfo.output_scanline;
    JSAMPROW row = direct ? job->image->data8.data() + row_bytes * static_cast<std::size_t>(y) : job->row;
    if (jpeg_read_scanlines(&cinfo, &row, 1) != 1) break;  // cannot happen with a memory source
    if (!direct) convert_row(*job, job->image->data8.data() + orient.row_start(y, job->channels),
                             orient.x_step(job->channels));
  }
  jpeg_finish_decompress(&cinfo);
  const bool warned = cinfo.err->num_warnings > 0;
  jpeg_destroy_decompress(&cinfo);
  return warned ? ReadStatus::Warning : ReadStatus::Ok;
}

// A JPEG decoded band by band (open_image_rows): libjpeg's state lives between the calls; each call that reaches
// into libjpeg has its own setjmp.
struct JpegRowState {
  jpeg_decompress_struct cinfo{};
  JpegReadJob job;
  bool created = false;
};

ReadStatus start_rows(JpegRowState* state) {
  JpegReadJob* job = &state->job;
  init_errors(&job->errors);
  state->cinfo.err = &job->errors.mgr;
  if (setjmp(job->errors.jump)) return ReadStatus::LibjpegError;
  state->created = true;
  const ReadStatus begun = begin_read(&state->cinfo, job);
  if (begun != ReadStatus::Ok) return begun;
  // Several scans (progressive, or sequential scans of one component each): libjpeg buffers the whole image's
  // coefficients before the first row, so band by band would hold no less than a whole read.
  if (jpeg_has_multiple_scans(&state->cinfo)) return ReadStatus::MultiScan;
  if (!allocate_pixels(job, job->components == 4, 0)) return ReadStatus::OutOfMemory;
  jpeg_start_decompress(&state->cinfo);
  return ReadStatus::Ok;
}

// The next `count` rows into dst; after the last row the decompression is finished (libjpeg reads to the end of the
// image, where it may still warn).
ReadStatus read_rows(JpegRowState* state, std::uint8_t* dst, std::int64_t count) {
  JpegReadJob* job = &state->job;
  jpeg_decompress_struct* cinfo = &state->cinfo;
  if (setjmp(job->errors.jump)) return ReadStatus::LibjpegError;
  const std::size_t row_bytes = static_cast<std::size_t>(job->width) * static_cast<std::size_t>(job->channels);
  for (std::int64_t i = 0; i < count; ++i) {
    JSAMPROW row = job->components == 4 ? job->row : dst + row_bytes * static_cast<std::size_t>(i);
    if (jpeg_read_scanlines(cinfo, &row, 1) != 1) return ReadStatus::LibjpegError;  // not with a memory source
    if (job->components == 4) convert_row(*job, dst + row_bytes * static_cast<std::size_t>(i), job->channels);
  }
  if (cinfo->output_scanline == cinfo->output_height) jpeg_finish_decompress(cinfo);
  return cinfo->err->num_warnings > 0 ? ReadStatus::Warning : ReadStatus::Ok;
}

void destroy_rows(JpegRowState* state) {
  if (state->created) jpeg_destroy_decompress(&state->cinfo);
  delete[] state->job.row;
}

// ---------------------------------------------------------------------------------------------------------------
// Writing

struct JpegWriteJob {
  const Image* image = nullptr;
  const RowFeed* feed = nullptr;
  bool feed_failed = false;
  int quality = 95;
  unsigned char* out = nullptr;  // malloc'ed by libjpeg; freed by the caller
  unsigned long out_size = 0;
  JpegErrors errors{};
};

// Ends a compression that failed: libjpeg's memory destination moves to a larger buffer as the output grows and
// tells job->out only in term_destination, so that is called first (job->out then holds the one live buffer, which
// the caller frees), then the compressor is destroyed.
void abandon_compress(jpeg_compress_struct* cinfo) {
  if (cinfo->dest != nullptr) (*cinfo->dest->term_destination)(cinfo);
  jpeg_destroy_compress(cinfo);
}

bool run_jpeg_write(JpegWriteJob* job) {
  jpeg_compress_struct cinfo{};
  init_errors(&job->errors);
  cinfo.err = &job->errors.mgr;
  if (setjmp(job->errors.jump)) {
    abandon_compress(&cinfo);
    return false;
  }
  jpeg_create_compress(&cinfo);
  jpeg_mem_dest(&cinfo, &job->out, &job->out_size);
  const Image& image = *job->image;
  cinfo.image_width = static_cast<JDIMENSION>(image.width);
  cinfo.image_height = static_cast<JDIMENSION>(image.height);
  cinfo.input_components = image.channels;
  cinfo.in_color_space = image.channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_set_defaults(&cinfo);
  jpeg_set_quality(&cinfo, job->quality, TRUE);
  jpeg_start_compress(&cinfo, TRUE);
  if (app1_fits(image.exif, kExifHeaderSize)) {
    std::string segment(kExifHeader, kExifHeaderSize);
    segment += image.exif;
    jpeg_write_marker(&cinfo, JPEG_APP0 + 1, reinterpret_cast<const JOCTET*>(segment.data()),
                      static_cast<unsigned int>(segment.size()));
  }
  if (app1_fits(image.xmp, kXmpHeaderSize)) {
    std::string segment(kXmpHeader, kXmpHeaderSize);
    segment += image.xmp;
    jpeg_write_marker(&cinfo, JPEG_APP0 + 1, reinterpret_cast<const JOCTET*>(segment.data()),
                      static_cast<unsigned int>(segment.size()));
  }
  if (profile_fits(image.icc_profile, image.channels)) {
    jpeg_write_icc_profile(&cinfo, reinterpret_cast<const JOCTET*>(image.icc_profile.data()),
                           static_cast<unsigned int>(image.icc_profile.size()));
  }
  const std::size_t row_bytes = static_cast<std::size_t>(image.width) * static_cast<std::size_t>(image.channels);
  const std::int64_t band = job->feed->band_rows > 0 ? job->feed->band_rows : image.height;
  for (std::int64_t y = 0; y < image.height; y += band) {
    const std::int64_t count = std::min(band, image.height - y);
    const std::uint8_t* rows = job->feed->band(y, count);
    if (rows == nullptr) {
      job->feed_failed = true;
      abandon_compress(&cinfo);
      return false;
    }
    for (std::int64_t k = 0; k < count; ++k) {
      // libjpeg reads the rows only; the const_cast never leads to a write.
      JSAMPROW row = const_cast<std::uint8_t*>(rows) + row_bytes * static_cast<std::size_t>(k);
      jpeg_write_scanlines(&cinfo, &row, 1);
    }
  }
  jpeg_finish_compress(&cinfo);
  jpeg_destroy_compress(&cinfo);
  return true;
}


[[noreturn]] void fail_read(const Codec& codec, const std::string& path, ReadStatus status, const HeaderFacts& facts,
                            const JpegReadJob& job) {
  if (status == ReadStatus::OutOfMemory) {
    fail(ErrorCode::Io, path, "cannot read: out of memory for a " + size_text(facts.width, facts.height) + " image");
  }
  if (status == ReadStatus::SizeMismatch) fail_corrupt(path, codec, "libjpeg reads a size other than the frame header's");
  fail_corrupt(path, codec, std::string("libjpeg: ") + job.errors.message);
}

JpegReadJob make_job(const HeaderFacts& facts, const FileBytes& bytes, const ImageReadOptions& options, Image* image) {
  JpegReadJob job;
  job.data = bytes.data;
  job.size = bytes.size;
  job.orientation = options.apply_exif_orientation ? facts.orientation : 1;
  job.expected_width = facts.width;
  job.expected_height = facts.height;
  job.shrink = options.jpeg_shrink;
  job.image = image;
  return job;
}

class JpegRows final : public ImageRows {
 public:
  JpegRows(const Codec& codec, const std::string& path, std::shared_ptr<const void> keep, const FileBytes& bytes,
           const HeaderFacts& facts, const ImageReadOptions& options)
      : codec_(codec), path_(path), keep_(std::move(keep)), facts_(facts) {
    state_.job = make_job(facts, bytes, options, &header_);
    state_.job.orientation = 1;
    const ReadStatus status = start_rows(&state_);
    multi_scan_ = status == ReadStatus::MultiScan;
    if (status != ReadStatus::Ok && !multi_scan_) {
      destroy_rows(&state_);
      fail_read(codec_, path_, status, facts_, state_.job);
    }
  }
  // The file has several scans: it is read whole instead (open_jpeg_rows gives no rows).
  bool multi_scan() const { return multi_scan_; }
  ~JpegRows() override { destroy_rows(&state_); }
  JpegRows(const JpegRows&) = delete;
  JpegRows& operator=(const JpegRows&) = delete;

 private:
  void decode(std::uint8_t* dst, std::int64_t count) override {
    const ReadStatus status = read_rows(&state_, dst, count);
    if (status != ReadStatus::Ok) fail_read(codec_, path_, status, facts_, state_.job);
  }

  const Codec& codec_;
  std::string path_;
  std::shared_ptr<const void> keep_;  // owns the file's bytes
  HeaderFacts facts_;
  JpegRowState state_;
  bool multi_scan_ = false;
};

}  // namespace

Image read_jpeg(const Codec& codec, const std::string& path, const FileBytes& bytes, const ImageReadOptions& options) {
  const HeaderFacts facts = codec.probe(codec, path, bytes, /*whole=*/true, options);
  Image image;
  JpegReadJob job = make_job(facts, bytes, options, &image);
  const ReadStatus status = run_jpeg_read(&job);
  delete[] job.row;
  if (status != ReadStatus::Ok) fail_read(codec, path, status, facts, job);
  return image;
}

std::unique_ptr<ImageRows> open_jpeg_rows(const Codec& codec, const std::string& path, std::shared_ptr<const void> keep,
                                          const FileBytes& bytes, FileSource*, const ImageReadOptions& options) {
  const HeaderFacts facts = codec.probe(codec, path, bytes, /*whole=*/true, options);
  if (options.apply_exif_orientation && facts.orientation != 1) return nullptr;  // rows would not come in order
  if (facts.progressive) return nullptr;
  auto rows = std::make_unique<JpegRows>(codec, path, std::move(keep), bytes, facts, options);
  if (rows->multi_scan()) return nullptr;
  return rows;
}

}  // namespace rsz::io::detail

namespace rsz::io {

namespace {

// An APPn segment: marker, big-endian length (itself included), `header`, `payload`.
void append_segment(std::vector<std::uint8_t>& out, int app, std::string_view header, std::string_view payload) {
  const std::size_t length = 2 + header.size() + payload.size();
  out.push_back(0xFF);
  out.push_back(static_cast<std::uint8_t>(0xE0 + app));
  out.push_back(static_cast<std::uint8_t>(length >> 8));
  out.push_back(static_cast<std::uint8_t>(length & 0xFF));
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), payload.begin(), payload.end());
}

}  // namespace

std::vector<std::uint8_t> with_jpeg_metadata(std::string_view jpeg, const Image& metadata, int channels) {
  const auto byte = [&](std::size_t i) { return static_cast<std::uint8_t>(jpeg[i]); };
  if (jpeg.size() < 4 || byte(0) != 0xFF || byte(1) != 0xD8) {
    throw Error(ErrorCode::Format, "with_jpeg_metadata: the encoded bytes do not start as a JPEG file");
  }
  // After SOI, and after a JFIF APP0 segment there (libjpeg writes its metadata after that header too).
  std::size_t at = 2;
  if (jpeg.size() >= 11 && byte(2) == 0xFF && byte(3) == 0xE0 && jpeg.substr(6, 5) == std::string_view("JFIF\0", 5)) {
    const std::size_t length = static_cast<std::size_t>(byte(4)) << 8 | byte(5);
    if (length >= 2 && 4 + length <= jpeg.size()) at = 4 + length;
  }
  std::vector<std::uint8_t> out(jpeg.begin(), jpeg.begin() + static_cast<std::ptrdiff_t>(at));
  out.reserve(jpeg.size() + metadata.exif.size() + metadata.xmp.size() + metadata.icc_profile.size() + 256);
  // write_image's rules: EXIF and XMP where an APP1 segment holds them; the profile in ICC_PROFILE chunks of at most
  // 65519 bytes, numbered from 1.
  if (detail::app1_fits(metadata.exif, detail::kExifHeaderSize)) {
    append_segment(out, 1, std::string_view(detail::kExifHeader, detail::kExifHeaderSize), metadata.exif);
  }
  if (detail::app1_fits(metadata.xmp, detail::kXmpHeaderSize)) {
    append_segment(out, 1, std::string_view(detail::kXmpHeader, detail::kXmpHeaderSize), metadata.xmp);
  }
  if (detail::profile_fits(metadata.icc_profile, channels)) {
    constexpr std::size_t kChunk = 65519;
    const std::string_view profile = metadata.icc_profile;
    const std::size_t chunks = (profile.size() + kChunk - 1) / kChunk;
    if (chunks <= 255) {
      for (std::size_t k = 0; k < chunks; ++k) {
        std::string header("ICC_PROFILE", 12);  // the NUL included
        header.push_back(static_cast<char>(k + 1));
        header.push_back(static_cast<char>(chunks));
        append_segment(out, 2, header, profile.substr(k * kChunk, kChunk));
      }
    }
  }
  out.insert(out.end(), jpeg.begin() + static_cast<std::ptrdiff_t>(at), jpeg.end());
  return out;
}

}  // namespace rsz::io

namespace rsz::io::detail {

std::vector<std::uint8_t> encode_jpeg(const Codec& codec, const std::string& path, const Image& image,
                                      const ImageWriteOptions& options, const RowFeed& feed) {
  const int quality = options.quality > 0 ? options.quality : kDefaultJpegQuality;
  if (const std::string reason = write_problem(codec, image); !reason.empty()) {
    fail(ErrorCode::Format, path, reason);
  }
  JpegWriteJob job;
  job.image = &image;
  job.feed = &feed;
  job.quality = quality;
  const bool ok = run_jpeg_write(&job);
  if (!ok && job.feed_failed) {
    std::free(job.out);
    if (feed.error != nullptr && *feed.error) std::rethrow_exception(*feed.error);
    fail(ErrorCode::Io, path, "cannot encode the JPEG image: its rows could not be produced");
  }
  std::vector<std::uint8_t> out;
  try {
    if (ok) out.assign(job.out, job.out + job.out_size);
  } catch (const std::bad_alloc&) {
    std::free(job.out);
    fail(ErrorCode::Io, path, "cannot write: out of memory while encoding the JPEG image");
  }
  std::free(job.out);
  if (!ok) fail(ErrorCode::Io, path, std::string("cannot encode the JPEG image: libjpeg: ") + job.errors.message);
  return out;
}

}  // namespace rsz::io::detail
