// Images in and out, and their conversion to and from tensors.
//
// Reading: PNG through libpng (gray, gray+alpha, RGB, RGBA, palette; 1/2/4/8/16 bits; palette and low bit depths
// expand to 8 bits, tRNS to an alpha channel); JPEG through libjpeg-turbo; BMP, TIFF, WebP, PPM/PGM through OpenCV
// imgcodecs, loaded only when a file of those formats is first read or written. The EXIF orientation of JPEGs and
// the Orientation tag of TIFFs are applied by default, so pixel coordinates refer to the upright image. Images
// larger than `max_pixels` are refused from their header, before the pixel buffer is allocated.
// Writing: the format follows the extension (.png, .jpg/.jpeg, .bmp, .tif/.tiff, .webp, .ppm/.pgm); 16-bit pixels
// are kept where the format can hold them (PNG, TIFF, PPM/PGM) and refused with a clear error otherwise. Writes are
// atomic: a temporary file in the same folder renamed over the target only when complete.
// All failures throw rsz::Error (ErrorCode::Io or ErrorCode::Format) with a one-line message starting with the path.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rsz/tensor.h"

// The public API: exported from a shared build, whose other symbols are hidden.
#pragma GCC visibility push(default)

namespace rsz::io {

constexpr std::int64_t kDefaultMaxPixels = std::int64_t{1} << 28;

struct ImageReadOptions {
  bool apply_exif_orientation = true;
  std::int64_t max_pixels = kDefaultMaxPixels;
  // Shrink-on-load, for formats whose codec decodes scaled (ImageInfo::max_shrink > 1: JPEG; other formats ignore
  // it): the image is decoded at 1 / jpeg_shrink of its size (1, 2, 4 or 8, at most max_shrink; each side rounded up)
  // by libjpeg's DCT scaling. Fast and approximate: not the pixels a full decode gives.
  int jpeg_shrink = 1;
  // Formats whose decoder takes the whole file in memory (all but PNG, which is read as it is decoded): a file larger
  // than this is refused before it is read whole (ErrorCode::Format). 0: no limit.
  std::uint64_t max_file_bytes = 0;
};

// The allocator of Image's sample buffers: rsz::allocate_buffer (huge pages for large images), and elements that
// resize() adds are left uninitialized rather than zeroed, because a decoder overwrites every one of them.
template <typename T>
struct SampleAllocator {
  using value_type = T;
  SampleAllocator() = default;
  template <typename U>
  SampleAllocator(const SampleAllocator<U>&) noexcept {}
  T* allocate(std::size_t n) {
    if (n > static_cast<std::size_t>(-1) / sizeof(T)) throw std::bad_alloc();
    return static_cast<T*>(allocate_buffer(n * sizeof(T)));
  }
  void deallocate(T* p, std::size_t) noexcept { free_buffer(p); }
  template <typename U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;  // default-initialization: no zero fill
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
  // Samples need no destruction: declared so that a vector's destructor does not walk every sample (without it,
  // std::vector loops over allocator_traits::destroy per element, a loop the compiler keeps).
  template <typename U>
  void destroy(U*) noexcept {}
  template <typename U>
  bool operator==(const SampleAllocator<U>&) const noexcept { return true; }
  template <typename U>
  bool operator!=(const SampleAllocator<U>&) const noexcept { return false; }
};
using Samples8 = std::vector<std::uint8_t, SampleAllocator<std::uint8_t>>;
using Samples16 = std::vector<std::uint16_t, SampleAllocator<std::uint16_t>>;

// Interleaved (HWC) pixels, channels in R, G, B(, A) order (gray = 1 channel, gray + alpha = 2).
struct Image {
  std::int64_t width = 0;
  std::int64_t height = 0;
  int channels = 0;   // 1, 2, 3 or 4
  int bit_depth = 8;  // 8 or 16
  // width * height * channels samples; 8-bit images use one byte per sample, 16-bit images two (host order).
  Samples8 data8;    // resize() leaves new samples uninitialized (see SampleAllocator)
  Samples16 data16;
  // The embedded ICC colour profile (the bytes of the profile, "" for none): read from PNG (iCCP) and JPEG (APP2)
  // files, and written to PNG and JPEG outputs when its colour space fits the pixels (an RGB profile for 3 or 4
  // channels, a gray one for 1 or 2); other formats, and a profile that does not fit, write none.
  std::string icc_profile;
  // EXIF (the TIFF structure, without the "Exif\0\0" prefix of JPEG) and XMP (the packet): read from JPEG (APP1),
  // PNG (eXIf, and the iTXt chunk "XML:com.adobe.xmp" before the image data), WebP, TIFF, HEIC and AVIF; written to
  // JPEG and PNG outputs (XMP in PNG as an iTXt chunk). When the reader
  // applied the EXIF orientation to the pixels, the orientation tag reads 1.
  std::string exif;
  std::string xmp;
};

struct ImageInfo {
  std::int64_t width = 0;
  std::int64_t height = 0;
  int channels = 0;
  int bit_depth = 8;
  std::string format;  // "png", "jpeg", "bmp", "tiff", "webp", "ppm", "pgm", "gif"
  bool rows_in_order = false;  // open_image_rows reads it band by band (see open_image_rows)
  // The bytes of the file read_image holds while it decodes: the file's size for formats decoded from memory, 0 for
  // PNG (read as it is decoded).
  std::uint64_t file_bytes = 0;
  // What the decoder holds besides the pixels and the file: a progressive JPEG's coefficients (libjpeg keeps every
  // block of the whole image, 128 bytes each, even when it decodes smaller); 0 for others.
  std::uint64_t decoder_bytes = 0;
  // The metadata the image carries (JPEG: its EXIF, ICC profile and XMP segments), which reading and writing copy.
  std::uint64_t metadata_bytes = 0;
  // Scaled decode (a capability of the format's codec): the largest N such that ImageReadOptions::jpeg_shrink = N
  // decodes the image at 1/N of its size directly (JPEG: 8, with 2 and 4); 1 where the format decodes at full size
  // only.
  int max_shrink = 1;
  // An animation (GIF): read_image decodes its first frame only.
  bool animated = false;
};

// True when the extension names an image format rsz can write.
bool is_image_path(const std::string& path);
// True when the extension names an image format rsz can read: the writable ones, plus .pbm and .pnm.
bool is_readable_image_path(const std::string& path);
// The extensions that name a format rsz can write, lower case with the dot, in the order of rsz::io's codec table:
// .png, .jpg, .jpeg, .bmp, .tif, .tiff, .webp, .ppm, .pgm (for lists of choices, such as a --format flag's).
std::vector<std::string> writable_image_extensions();
// Whether the extensions of `a` and `b` name one writable image format of the codec table (.jpg and .jpeg, .tif and
// .tiff); false where either names none.
bool same_image_format(const std::string& a, const std::string& b);
// Whether the format of `path` (its extension) holds an alpha channel, and 16-bit samples; false for a path of no
// writable format.
bool format_keeps_alpha(const std::string& path);
bool format_keeps_16_bits(const std::string& path);
// The name of the image format `path`'s extension names ("png", "jpeg", ...: ImageInfo::format's), "" for none.
std::string image_format_name(const std::string& path);
// ImageInfo::max_shrink of a file of the format `path`'s extension names (the scaled decode of its codec); 1 for an
// extension of no format.
int max_shrink_of(const std::string& path);
// The channel count an image of `channels` channels written to `path` (its format from the extension) has when read
// back: a format without gray (WebP) stores gray as RGB. `channels` for any other format or path.
int channels_read_back(const std::string& path, int channels);
// The usual extension (".png", ".jpg", ...) of the image format a file starting with `head` is in, from the codec
// table's sniffers (the ones read_image identifies files with); "" when no codec knows these bytes. For data without
// a name, such as standard input.
std::string sniff_image_extension(const std::string& head);
// The formats rsz reads, for messages: "PNG, JPEG, BMP, TIFF, WebP or PPM/PGM".
const std::string& readable_image_formats();
// True when write_image_rows encodes each band as it is produced for this path's format (PNG, JPEG), so that only one
// band of samples exists at a time; other formats gather the bands first. False for a path of no writable format.
bool encodes_image_rows(const std::string& path);
// The bytes an encoder holds besides the samples it is given and the file it makes, for an output at `path` of
// `sample_bytes` bytes of samples: a default PNG (png_compression < 0) deflated whole by libdeflate holds its
// filtered rows, about its samples; 0 for the others.
std::uint64_t encode_scratch_bytes(const std::string& path, std::uint64_t sample_bytes, int png_compression);
Image read_image(const std::string& path, const ImageReadOptions& options = {});

// An image read band by band, for memory: its rows are decoded as they are asked for, so a camera-size photo never
// exists whole (rsz thumbnail's large JPEGs and PNGs, with rsz::resample_rows). The rows are those read_image gives.
class ImageRows {
 public:
  virtual ~ImageRows() = default;
  // The size, channels (1 or 3), bit depth (8, or 8 and 16 for PNG) and metadata; no samples.
  const Image& header() const { return header_; }
  // The first row read() will give.
  std::int64_t next_row() const { return next_; }
  // Decodes the next `count` rows (header().width * header().channels samples each, 16-bit ones in host order) into
  // dst. Throws rsz::Error as
  // read_image does (a damaged file is found as its rows are reached), or InvalidArgument past the last row.
  void read(std::uint8_t* dst, std::int64_t count);

 protected:
  virtual void decode(std::uint8_t* dst, std::int64_t count) = 0;
  Image header_;

 private:
  std::int64_t next_ = 0;
};
// The rows of a JPEG whose EXIF orientation keeps its rows in order (1, or not applied), or of a PNG that is not
// interlaced and has no alpha (read from the file as they are asked for); null for any other file, which read_image
// reads whole. Throws as read_image does for a file it cannot read.
std::unique_ptr<ImageRows> open_image_rows(const std::string& path, const ImageReadOptions& options = {});
// The same rows from the file's bytes, read already (`file`, kept by the rows; `path` names it in messages): the
// file is not opened again. Null also for a file of a codec that reads its file as it decodes (PNG).
std::unique_ptr<ImageRows> open_image_rows(const std::string& path, std::shared_ptr<const std::string> file,
                                           const ImageReadOptions& options = {});
// Header-level facts (for `rsz info`): reads no more of the file than needed.
ImageInfo read_image_info(const std::string& path, const ImageReadOptions& options = {});
constexpr int kDefaultJpegQuality = 95;
constexpr int kDefaultWebpQuality = 80;  // Pillow's default (vips and cwebp use 75)

struct ImageWriteOptions {
  // JPEG, WebP, AVIF and JPEG XL quality 1..100 (0: the format's default, 95 for JPEG, 80 for WebP, 50 for AVIF, 90
  // for JPEG XL, whose 100 is lossless; its quality is mapped to a Butteraugli distance as cjxl maps it).
  int quality = 0;
  // WebP, AVIF and JPEG XL: lossless instead of lossy (the quality is then not used).
  bool lossless = false;
  // PNG zlib level: 0 (stored) to 9 (smallest, slowest), with libpng's adaptive filters; -1 (default): the Sub
  // filter deflated by libdeflate at level 1 (smaller than zlib's level 2 in about half its time), or by zlib at level
  // 2 without libdeflate and for images of more than 32 MiB of samples.
  int png_compression = -1;
};

void write_image(const std::string& path, const Image& image, const ImageWriteOptions& options = {});
// Why write_image would refuse an image of this size, channel count and bit depth at `path` ("" when it would not):
// an extension that names no writable format, or pixels the format cannot hold (16 bits in JPEG, alpha in JPEG or
// BMP, sides over the format's limit). Lets a caller refuse before doing any work.
std::string image_output_problem(const std::string& path, std::int64_t width, std::int64_t height, int channels,
                                 int bit_depth);
// The same with only a quality (JPEG 1..100, or lossy WebP).
void write_image(const std::string& path, const Image& image, int quality);
// The bytes write_image would write to `path`, in memory and nowhere else (a member of a .tar archive): the format
// from the path's extension, the same checks, messages and bytes.
std::vector<std::uint8_t> encode_image(const std::string& path, const Image& image,
                                       const ImageWriteOptions& options = {});
// A JPEG file encoded elsewhere (nvJPEG on the GPU: --encode gpu) with `metadata`'s EXIF, XMP and ICC profile (for
// `channels` colour channels: a profile that does not describe them is left out, as write_image leaves it out) in
// the APP segments write_image's JPEG encoder writes, placed where it places them: after the start of the file and
// its JFIF header. Throws rsz::Error (Format) where `jpeg` does not start as a JPEG file.
std::vector<std::uint8_t> with_jpeg_metadata(std::string_view jpeg, const Image& metadata, int channels);
// Writes bytes encoded elsewhere to `path` as write_image writes its files: whole or not at all (a temporary file
// flushed per set_sync_outputs and renamed over the target).
void write_encoded_image(const std::string& path, const std::vector<std::uint8_t>& bytes);

// Fills `band` (width, channels and bit depth of the image being written, `band.height` rows, samples allocated)
// with the image's rows [first_row, first_row + band.height).
using RowProducer = std::function<void(std::int64_t first_row, Image& band)>;
// write_image for an image produced band by band, for outputs too large to hold whole: `header` gives the size,
// channels, bit depth and metadata (its samples are ignored); `produce` is called for consecutive bands of at most
// `band_rows` rows, top to bottom. PNG and JPEG encode each band as soon as it is produced, so only one band of
// samples exists at a time; other formats collect the bands and encode the whole image. An exception from
// `produce` propagates unchanged and nothing is written. The same checks, messages and bytes as write_image.
void write_image_rows(const std::string& path, const Image& header, std::int64_t band_rows,
                      const RowProducer& produce, const ImageWriteOptions& options = {});
// The bytes write_image_rows would write to `path`, in memory (encode_image for an image produced band by band).
std::vector<std::uint8_t> encode_image_rows(const std::string& path, const Image& header, std::int64_t band_rows,
                                            const RowProducer& produce, const ImageWriteOptions& options = {});

// Value mapping: a sample p of an image with bit depth b becomes p / (2^b - 1) in [0, 1]; on the way back a value v
// becomes round(v * (2^b - 1)) saturated to [0, 2^b - 1] (NaN becomes 0). An identity round trip is exact at 8 and
// 16 bits in float32, and at 8 bits in float16.
enum class AlphaMode {
  Premultiplied,  // colour is multiplied by alpha in the tensor, so linear filtering makes no dark halos
  Straight,       // colour and alpha are independent channels
};
const char* to_string(AlphaMode mode);  // "premultiplied", "straight"
std::vector<std::string> alpha_mode_names();
// Throws ErrorCode::InvalidArgument: `what` = "TEXT"; premultiplied or straight is allowed.
AlphaMode parse_alpha_mode(const std::string& text, const std::string& what);

// The compute types of images (image_to_tensor's): "float32", "float16".
std::vector<std::string> compute_type_names();
// Throws ErrorCode::InvalidArgument: `what` = "TEXT"; float32 or float16 is allowed.
DataType parse_compute_type(const std::string& text, const std::string& what);

// A packed 1 x C x H x W tensor of `type` (float32 or float16).
Tensor image_to_tensor(const Image& image, DataType type, AlphaMode alpha = AlphaMode::Premultiplied);
// The inverse. The tensor must be 1 x C x H x W with C in 1..4 (C = 2 and 4 carry alpha last); `alpha` must be the
// mode the tensor was made with: premultiplied colour is divided by alpha (colour under alpha 0 becomes 0).
Image tensor_to_image(const ConstTensorView& tensor, int bit_depth, AlphaMode alpha = AlphaMode::Premultiplied);
// The sample tensor_to_image makes of a value at `bit_depth` (8 or 16): round(v * (2^bits - 1)) in double, saturated,
// NaN and v <= 0 giving 0.
std::uint32_t sample_of(double v, int bit_depth);

}  // namespace rsz::io

#pragma GCC visibility pop
