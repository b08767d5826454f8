// The C interface of librsz_opencv_codecs.so, the module through which rsz::io reaches OpenCV imgcodecs (BMP, TIFF,
// WebP, PPM/PGM) and the metadata of WebP (libwebpmux / libwebpdemux) and TIFF (libtiff) files. rsz::io loads it with dlopen the first time a file needs it, so programs that read and write only
// PNG and JPEG never load OpenCV and the hundred-odd libraries it pulls in. Plain C types only: no C++ object or
// exception crosses this boundary.
#pragma once

#include <cstddef>

extern "C" {

// Bumped whenever a signature below changes; the loader refuses a module of another version.
#define RSZ_OPENCV_MODULE_ABI 2

// Interleaved pixels, BGR(A) channel order as OpenCV keeps them; `step` is the distance between rows in bytes.
struct RszCvPixels {
  int width;
  int height;
  int channels;  // 1 to 4
  int depth;     // OpenCV depth code: 0 = 8-bit unsigned, 2 = 16-bit unsigned, others as in OpenCV
  unsigned char* data;
  std::size_t step;
  void* owner;  // the module's handle on the buffer; rsz_cv_release frees it
};

enum RszCvStatus { RSZ_CV_OK = 0, RSZ_CV_FAILED = 1, RSZ_CV_OUT_OF_MEMORY = 2 };

int rsz_cv_abi_version(void);
// Decodes a whole file held in memory with IMREAD_UNCHANGED (stored depth, channels and orientation). On failure
// `message` holds one line (possibly empty when OpenCV gave no reason).
int rsz_cv_decode(const unsigned char* bytes, std::size_t size, RszCvPixels* out, char* message,
                  std::size_t message_size);
void rsz_cv_release(RszCvPixels* pixels);
// Encodes `pixels` (BGR(A)) in the format named by `ext` (".bmp", ".tiff", ".webp", ".ppm", ".pgm") with
// cv::imencode's parameter pairs; `*out` is malloc'ed, to be freed with rsz_cv_free.
int rsz_cv_encode(const char* ext, const RszCvPixels* pixels, const int* params, int param_count, unsigned char** out,
                  std::size_t* out_size, char* message, std::size_t message_size);
void rsz_cv_free(unsigned char* bytes);

// A file's metadata blobs: the ICC profile, EXIF (TIFF-structured, without JPEG's "Exif\0\0" prefix) and the XMP
// packet; a missing one is null with size 0. Those the module returns are malloc'ed (rsz_cv_free each).
struct RszCvMetadata {
  unsigned char* icc;
  std::size_t icc_size;
  unsigned char* exif;
  std::size_t exif_size;
  unsigned char* xmp;
  std::size_t xmp_size;
};

// Reads the metadata of a WebP file (its ICCP, EXIF and "XMP " chunks; ext ".webp") or a TIFF file (the ICC profile
// and XMP tags of its first directory; ext ".tiff") held in memory. A file without metadata gives an empty `*out`.
int rsz_cv_read_metadata(const char* ext, const unsigned char* bytes, std::size_t size, RszCvMetadata* out,
                         char* message, std::size_t message_size);
// The encoded WebP or TIFF file `bytes` with `metadata` added: WebP as ICCP / EXIF / "XMP " chunks (the extended
// VP8X form), TIFF as the ICC profile and XMP tags of its first directory (TIFF's EXIF is a directory of its own,
// not a blob: not written). `*out` is malloc'ed, to be freed with rsz_cv_free.
int rsz_cv_add_metadata(const char* ext, const unsigned char* bytes, std::size_t size, const RszCvMetadata* metadata,
                        unsigned char** out, std::size_t* out_size, char* message, std::size_t message_size);

}  // extern "C"
