// The codec table of rsz::io (not installed, not public): one entry per image format, in the spirit of
// OpenImageIO's format plugins. An entry says what the format is called, which extensions and first bytes name it,
// which functions probe its header, decode and encode it, and what it can hold (bit depths, channels, size, metadata,
// band-by-band encoding). Everything in rsz::io that depends on the format asks the table; nothing switches on
// ImageFormat.
//
// Each codec's entry lives beside its magic-byte sniffer and header probe in codecs/<format>.cpp (png, jpeg, bmp,
// tiff, webp, pnm); the codec libraries' decoders and encoders stay in image_png.cpp (libpng), image_jpeg.cpp
// (libjpeg-turbo) and image_opencv.cpp (OpenCV imgcodecs through its module). codec_table.cpp holds the table, its
// lookups and what is derived from it (lists of formats in messages, the write checks).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "image_internal.h"

namespace rsz::io::detail {

// What a file holds, from its first bytes (reading) or what its extension names (writing); the order of the table.
enum class ImageFormat { Png, Jpeg, Bmp, Tiff, Webp, Ppm, Pgm, Gif, Heic, Avif, Jxl };

// Bit depths a codec writes.
enum : unsigned { kWrites8 = 1u << 0, kWrites16 = 1u << 1 };
// Metadata a codec carries (Image::icc_profile, exif, xmp).
enum : unsigned { kIcc = 1u << 0, kExif = 1u << 1, kXmp = 1u << 2 };
// Channel counts a codec writes: bit c for c channels.
constexpr unsigned channel_bit(int channels) { return 1u << channels; }
constexpr unsigned kGray = channel_bit(1), kGrayAlpha = channel_bit(2), kRgb = channel_bit(3), kRgba = channel_bit(4);

struct Codec;
// True when the first bytes of a file are this format's.
using SniffFn = bool (*)(const std::uint8_t* data, std::size_t size);
// Header facts without a codec library (codecs/header_reader.h): the size (refused above max_pixels), and the
// orientation, channels and bit depth where the header tells them. `whole`: also checks that the file holds all the
// data the header announces; otherwise reads only as far as the size (throwing NeedMoreBytes when a prefix ends too
// early).
using ProbeFn = HeaderFacts (*)(const Codec& codec, const std::string& path, const FileBytes& bytes, bool whole,
                                const ImageReadOptions& options);
// Fills the channels and bit depth a probe left 0 (TIFF's) by decoding the complete file.
using DecodedFactsFn = void (*)(const Codec& codec, const std::string& path, const FileBytes& bytes,
                                HeaderFacts& facts);
// read_image_info's answer; may throw NeedMoreBytes when `bytes` is an incomplete prefix.
using InfoFn = ImageInfo (*)(const Codec& codec, const std::string& path, const FileBytes& bytes,
                             const ImageReadOptions& options);
// read_image's answer from the whole file.
using DecodeFn = Image (*)(const Codec& codec, const std::string& path, const FileBytes& bytes,
                           const ImageReadOptions& options);
// read_image_info's and read_image's answers for a codec that reads the file as it decodes (PNG): `source` hands out
// the file's bytes front to back, as many as the decoder asks for.
using StreamInfoFn = ImageInfo (*)(const Codec& codec, const std::string& path, FileSource& source,
                                   const ImageReadOptions& options);
using StreamDecodeFn = Image (*)(const Codec& codec, const std::string& path, FileSource& source,
                                 const ImageReadOptions& options);
// An encoder fed band by band: `header` gives the size, channels, bit depth and metadata (its samples are not
// read); the rows come from `feed`.
using RowEncodeFn = std::vector<std::uint8_t> (*)(const Codec& codec, const std::string& path, const Image& header,
                                                  const ImageWriteOptions& options, const RowFeed& feed);
// The rows of the whole file `bytes` (owned by `keep`) band by band; null where this file's rows cannot come in order.
// A codec that reads as it decodes (reads_stream) gets the file as `source` (owned by `keep`) and no bytes.
using OpenRowsFn = std::unique_ptr<ImageRows> (*)(const Codec& codec, const std::string& path,
                                                  std::shared_ptr<const void> keep, const FileBytes& bytes,
                                                  FileSource* source, const ImageReadOptions& options);
// An encoder of a whole image.
using EncodeFn = std::vector<std::uint8_t> (*)(const Codec& codec, const std::string& path, const Image& image,
                                               const ImageWriteOptions& options);

struct Codec {
  ImageFormat format = ImageFormat::Png;
  const char* name = "";          // ImageInfo::format: "png", "jpeg", ...
  const char* display_name = "";  // in messages: "PNG", "JPEG", ...
  const char* family = "";        // in lists of formats, once for all its members: "PPM/PGM"
  // Extensions (lower case, with the dot; unused slots null): written and read, the usual one first; read only.
  std::array<const char*, 2> extensions{};
  std::array<const char*, 2> read_only_extensions{};

  // Reading.
  SniffFn sniff = nullptr;
  ProbeFn probe = nullptr;                  // null: the codec library reads the header (PNG)
  DecodedFactsFn decoded_facts = nullptr;   // null: the probe always gives channels and depth
  InfoFn info = nullptr;
  DecodeFn decode = nullptr;
  OpenRowsFn open_rows = nullptr;  // null: read whole (read_image)
  // A codec that reads the file as it decodes has these instead of info and decode: the file is never held whole.
  StreamInfoFn stream_info = nullptr;
  StreamDecodeFn stream_decode = nullptr;
  unsigned metadata_read = 0;  // kIcc | kExif | kXmp
  // Scaled decode: the largest N such that the decoder makes the image at 1/N of its size directly (ImageReadOptions::
  // jpeg_shrink: 1/2, 1/4 or 1/8 by libjpeg's DCT scaling), 1 where it cannot.
  int max_shrink = 1;

  // Writing: a format rsz cannot write has neither encoder.
  RowEncodeFn encode_rows = nullptr;  // encodes each band as it is produced (write_image_rows streams)
  EncodeFn encode = nullptr;          // takes the whole image (write_image_rows gathers the bands first)
  unsigned depths = 0;                // kWrites8 | kWrites16
  unsigned channels = 0;              // channel_bit(c) for each count c written
  bool gray_as_rgb = false;           // gray is written as three equal channels (and reads back as RGB)
  // The refusal of a channel count other than gray + alpha: "<display_name> <channels_refusal> (the image has ...);
  // <channels_advice>". A null advice: the counts allowed and the formats that keep alpha.
  const char* channels_refusal = "";
  const char* channels_advice = nullptr;
  std::int64_t max_side = 0;           // the largest width or height checked before encoding; 0: none
  const char* max_side_reason = "";    // after the display name in the refusal: "" or " through OpenCV"
  unsigned metadata_written = 0;       // kIcc | kExif | kXmp (ICC only when its colour space fits the pixels)

  // OpenCV codecs: the name under which librsz_opencv_codecs.so encodes the format and reads and writes its
  // metadata (".bmp", ".tiff", ...); null for the formats rsz codes itself.
  const char* module_ext = nullptr;

  bool reads_stream() const { return stream_decode != nullptr; }
  bool writable() const { return encode_rows != nullptr || encode != nullptr; }
  bool streams_rows() const { return encode_rows != nullptr; }
  bool writes_depth(int bit_depth) const {
    return (bit_depth == 8 && (depths & kWrites8)) || (bit_depth == 16 && (depths & kWrites16));
  }
  bool writes_channels(int count) const { return count >= 1 && count <= 4 && (channels & channel_bit(count)); }
};

constexpr std::size_t kCodecCount = 11;
// Every codec, in the order files are sniffed (and formats listed in messages).
const std::array<Codec, kCodecCount>& codecs();

// Lookups: by format; by a path's extension (case-insensitive; the writable extensions, plus the read-only ones
// when `read_only_too`), null when none; by a file's first bytes, null when none matches.
const Codec& codec_for(ImageFormat format);
const Codec* codec_for_extension(const std::string& path, bool read_only_too = false);
const Codec* sniff_codec(const std::uint8_t* data, std::size_t size);

// Lists for messages, from the table: "PNG, JPEG, BMP, TIFF, WebP and PPM/PGM are allowed" and ".png, .jpg, .jpeg,
// .bmp, .tif, .tiff, .webp, .ppm and .pgm are allowed".
const std::string& readable_formats_text();
const std::string& readable_formats_list();  // "PNG, JPEG, BMP, TIFF, WebP or PPM/PGM"
const std::string& writable_extensions_text();

// Empty when `image` (its size, channels and bit depth; its samples are not read) can be written by `codec`, else
// the complaint: 16 bits into an 8-bit format, a channel count the format cannot hold, a size over its limit.
std::string write_problem(const Codec& codec, const Image& image);

// ----- The entries, beside each format's sniffer and probe (codecs/*.cpp)
Codec png_codec();
Codec jpeg_codec();
Codec bmp_codec();
Codec tiff_codec();
Codec webp_codec();
Codec ppm_codec();
Codec pgm_codec();
Codec gif_codec();   // read only (giflib)
Codec heic_codec();  // read only (libheif, loaded on first use): .heic, .heif
Codec avif_codec();  // read only (libheif)
Codec jxl_codec();   // libjxl, loaded on first use

// ----- What the entries point at

// read_image_info from a codec's header probe (every format but PNG): the size as read_image makes it (JPEG's EXIF
// orientation and TIFF's Orientation tag applied), channels and bit depth (decoded when the probe cannot tell).
ImageInfo info_from_header(const Codec& codec, const std::string& path, const FileBytes& bytes,
                           const ImageReadOptions& options);

// PNG (image_png.cpp, libpng), read from the file as libpng asks for it: nothing after the image data is read.
// encode_png: zlib level options.png_compression 0..9 with adaptive filters, or -1 for the fast default.
Image read_png(const Codec& codec, const std::string& path, FileSource& source, const ImageReadOptions& options);
ImageInfo read_png_info(const Codec& codec, const std::string& path, FileSource& source,
                        const ImageReadOptions& options);
std::vector<std::uint8_t> encode_png(const Codec& codec, const std::string& path, const Image& header,
                                     const ImageWriteOptions& options, const RowFeed& feed);
// Rows of a PNG that is not interlaced and has no alpha; null for the others (read_png reads them whole).
std::unique_ptr<ImageRows> open_png_rows(const Codec& codec, const std::string& path, std::shared_ptr<const void> keep,
                                         const FileBytes& bytes, FileSource* source, const ImageReadOptions& options);

// JPEG (image_jpeg.cpp, libjpeg-turbo). encode_jpeg: quality options.quality, or kDefaultJpegQuality for 0.
Image read_jpeg(const Codec& codec, const std::string& path, const FileBytes& bytes, const ImageReadOptions& options);
std::unique_ptr<ImageRows> open_jpeg_rows(const Codec& codec, const std::string& path, std::shared_ptr<const void> keep,
                                          const FileBytes& bytes, FileSource* source, const ImageReadOptions& options);
std::vector<std::uint8_t> encode_jpeg(const Codec& codec, const std::string& path, const Image& header,
                                      const ImageWriteOptions& options, const RowFeed& feed);

// BMP, TIFF, WebP, PPM/PGM (image_opencv.cpp: OpenCV imgcodecs in a module loaded at first use).
Image read_opencv(const Codec& codec, const std::string& path, const FileBytes& bytes,
                  const ImageReadOptions& options);
void decoded_facts(const Codec& codec, const std::string& path, const FileBytes& bytes, HeaderFacts& facts);
// Encodes with cv::imencode's parameter pairs `params` (codec.module_ext names the format), and adds the metadata
// the codec carries.
std::vector<std::uint8_t> encode_opencv(const Codec& codec, const std::string& path, const Image& image,
                                        const std::vector<int>& params);
// What every entry read through OpenCV shares: channels and depth decoded where the header probe cannot tell, the
// info from the header, OpenCV's decoder, and OpenCV's int sizes as the largest side; the entries add the rest.
Codec opencv_codec();

}  // namespace rsz::io::detail
