// Internal helpers shared by image.cpp, image_png.cpp and image_opencv.cpp (not installed, not public).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "file_util.h"
#include "rsz/error.h"
#include "rsz/io/image.h"

namespace rsz::io::detail {

// What a file holds, from its first bytes (reading) or what its extension names (writing).
enum class ImageFormat { Unknown, Png, Jpeg, Bmp, Tiff, Webp, Ppm, Pgm };

// "png", "jpeg", ... as in ImageInfo::format ("" for Unknown).
const char* format_name(ImageFormat format);

constexpr const char* kReadableFormats = "PNG, JPEG, BMP, TIFF, WebP and PPM/PGM are allowed";
constexpr const char* kWritableExtensions = ".png, .jpg, .jpeg, .bmp, .tif, .tiff, .webp, .ppm and .pgm are allowed";

// "100 x 20".
std::string size_text(std::int64_t width, std::int64_t height);

// The format of a file from its magic bytes (Unknown when none matches).
ImageFormat sniff_format(const std::uint8_t* data, std::size_t size);

// Bytes of a file: a prefix, or all of it when `complete`.
struct FileBytes {
  const std::uint8_t* data = nullptr;
  std::size_t size = 0;
  bool complete = false;
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

// ----- PNG (image_png.cpp, libpng)
Image read_png(const std::string& path, const FileBytes& bytes, const ImageReadOptions& options);
// Header-level facts; throws NeedMoreBytes when `bytes` is an incomplete prefix that ends too early.
ImageInfo read_png_info(const std::string& path, const FileBytes& bytes, const ImageReadOptions& options);
std::vector<std::uint8_t> encode_png(const std::string& path, const Image& image);

// ----- JPEG, BMP, TIFF, WebP, PPM/PGM (image_opencv.cpp, OpenCV imgcodecs + header parsers)
Image read_opencv(const std::string& path, const FileBytes& bytes, ImageFormat format, const ImageReadOptions& options);
// Header-level facts; throws NeedMoreBytes when `bytes` is an incomplete prefix that ends too early.
ImageInfo read_opencv_info(const std::string& path, const FileBytes& bytes, ImageFormat format,
                           const ImageReadOptions& options);
std::vector<std::uint8_t> encode_opencv(const std::string& path, const Image& image, ImageFormat format,
                                        int jpeg_quality);

}  // namespace rsz::io::detail
