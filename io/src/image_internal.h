// Internal helpers shared by image.cpp, the codec files (image_png.cpp, image_jpeg.cpp, image_opencv.cpp) and the
// codec table with its header probes (codecs/; not installed, not public).
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <string>
#include <vector>

#include "file_util.h"
#include "rsz/error.h"
#include "rsz/io/image.h"

namespace rsz::io::detail {

struct Codec;  // codecs/codec.h: the codec table

// "100 x 20".
std::string size_text(std::int64_t width, std::int64_t height);

// Bytes of a file: a prefix, or all of it when `complete`.
struct FileBytes {
  const std::uint8_t* data = nullptr;
  std::size_t size = 0;
  bool complete = false;
};

// A file read front to back as a decoder asks for its bytes (PNG): first the prefix already read, then the rest from
// the file through a small buffer, so that only what the decoder asks for is read and the file is never held whole.
class FileSource {
 public:
  // `fd` stands just after `prefix` (the file's first bytes).
  FileSource(const FileBytes& prefix, int fd) : prefix_(prefix), fd_(fd), buffer_(kBufferSize) {}
  // Copies the next bytes of the file to `out`: `length` of them, fewer when the file ends or cannot be read (then
  // error() is the errno). For decoder callbacks: allocates nothing and throws nothing.
  std::size_t read(std::uint8_t* out, std::size_t length) noexcept;
  // How many bytes read() has handed out.
  std::size_t position() const noexcept { return position_; }
  int error() const noexcept { return error_; }

 private:
  static constexpr std::size_t kBufferSize = std::size_t{64} << 10;
  FileBytes prefix_;
  int fd_;
  std::vector<std::uint8_t> buffer_;
  std::size_t buffered_ = 0;  // bytes of buffer_ held
  std::size_t taken_ = 0;     // of which handed out
  std::size_t position_ = 0;
  int error_ = 0;
};

// Thrown by the header parsers when a prefix of the file (FileBytes::complete false) ended before the facts they
// need; the caller then reads the whole file and tries again. Never escapes rsz::io.
struct NeedMoreBytes {};

// Refuses an image of width x height above `options.max_pixels` (ErrorCode::Format).
void check_pixel_limit(const std::string& path, std::int64_t width, std::int64_t height,
                       const ImageReadOptions& options);

// Checks that an Image is self-consistent (channels 1..4, bit depth 8 or 16, sizes >= 1, buffer size matches);
// throws ErrorCode::InvalidArgument naming `path` otherwise.
void check_image(const std::string& path, const Image& image);

// Writes `data` to a temporary file in the folder of `path` (".<name>.tmp-<pid>-<counter>") and renames it over
// `path`. On any failure the temporary file is removed and `path` is left as it was. Does not create folders.
void write_file_atomic(const std::string& path, const std::uint8_t* data, std::size_t size);

// ----- Header facts and orientation

// Where the value of an orientation tag sits in a file or a TIFF structure; kNoOrientation: nowhere.
constexpr std::size_t kNoOrientation = static_cast<std::size_t>(-1);

// What the header of a file says.
struct HeaderFacts {
  std::int64_t width = 0;  // as stored (before any orientation)
  std::int64_t height = 0;
  int channels = 0;  // 0: known only after decoding (TIFF)
  int bit_depth = 0;
  int orientation = 1;  // EXIF orientation (JPEG) or the Orientation tag (TIFF), 1..8
  // TIFF: the file offset of the Orientation tag's value (one SHORT in the file's byte order) when it is 2..8.
  std::size_t orientation_offset = kNoOrientation;
  bool progressive = false;  // JPEG: a progressive frame (SOF2, 6, 10, 14), decoded whole by libjpeg
  int components = 0;        // JPEG: the frame's components (3 for colour, 4 for CMYK)
  // JPEG: the bytes of the APPn segments before the frame (EXIF, ICC profile, XMP), which decoding keeps and copies.
  std::uint64_t metadata_bytes = 0;
  bool animated = false;  // GIF: more than one frame (the first is the image)
  std::uint64_t decoder_bytes = 0;  // what the decoder holds besides the result (HEIF: its planes), 0 when unknown
};

// "not a valid <format> file: <what>; a valid <format> file is required" (ErrorCode::Format).
[[noreturn]] void fail_corrupt(const std::string& path, const Codec& codec, const std::string& what);

// Where the stored pixel (x, y) of a w x h image lands in the upright image of EXIF orientation 1..8: at column
// x0 + x * xx + y * xy and row y0 + x * yx + y * yy of an out_width x out_height image.
struct Orientation {
  Orientation(int orientation, std::int64_t w, std::int64_t h);
  std::int64_t out_width = 0;
  std::int64_t out_height = 0;
  std::int64_t x0 = 0, xx = 1, xy = 0, y0 = 0, yx = 0, yy = 1;
  // Offset in samples of stored pixel (0, y) in the upright buffer, and the step in samples per stored x.
  std::int64_t row_start(std::int64_t y, int channels) const {
    return ((y0 + y * yy) * out_width + x0 + y * xy) * channels;
  }
  std::int64_t x_step(int channels) const { return (yx * out_width + xx) * channels; }
};

// Whether an ICC profile describes pixels of `channels` (its header's colour space at bytes 16-19: "RGB " for 3 or
// 4 channels, "GRAY" for 1 or 2), so that writing it with them is right; false for an empty or truncated profile.
inline bool profile_fits(const std::string& profile, int channels) {
  if (profile.size() < 128) return false;  // an ICC header is 128 bytes
  const std::string space = profile.substr(16, 4);
  return channels >= 3 ? space == "RGB " : space == "GRAY";
}

// Where the value of the EXIF orientation tag (0x0112, one SHORT) sits in a TIFF structure (the payload of an APP1
// Exif segment or a PNG eXIf chunk), or kNoOrientation.
std::size_t exif_orientation_offset(const std::uint8_t* tiff, std::size_t length);
// Sets the orientation tag of `exif` (the TIFF structure) to 1, where it has one: the reader turned the pixels
// upright, so the tag must not turn them again.
void reset_exif_orientation(std::string& exif);

// The rows of an image being encoded, handed over in bands: band(first, count) returns `count` packed rows from row
// `first` on, or null when the producer failed (it then keeps its exception in *error for the caller to rethrow).
struct RowFeed {
  std::int64_t band_rows = 0;  // rows per call (the last band may be shorter); 0: all rows in one call
  std::function<const std::uint8_t*(std::int64_t first, std::int64_t count)> band;
  const std::exception_ptr* error = nullptr;
};
// A default PNG output of at most this many bytes of samples is filtered whole and deflated by libdeflate in one call
// (image_png.cpp); larger ones go through libpng band by band.
constexpr std::size_t kPngDeflateMaxBytes = std::size_t{32} << 20;
// A feed over the samples of a whole image.
RowFeed whole_image_feed(const Image& image);

}  // namespace rsz::io::detail
