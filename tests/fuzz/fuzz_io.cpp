// libFuzzer targets for the rsz::io parsers, one executable per target (tests/fuzz/CMakeLists.txt compiles this file
// once per target with RSZ_FUZZ_CALL naming one of the functions below and RSZ_FUZZ_EXTENSION the file extension).
// The readers take paths, so each input is written to a file in a private folder (mkdtemp under $TMPDIR or /tmp,
// made once, removed at exit) and read back. rsz::Error is the contract's way to refuse an input; any other exception
// (rsz::InternalError, std::bad_alloc, ...) escaping a reader is a bug and aborts the run.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "rsz/error.h"
#include "rsz/io/annotations.h"
#include "rsz/io/batch_file.h"
#include "rsz/io/config.h"
#include "rsz/io/image.h"
#include "rsz/io/npy.h"

#if !defined(RSZ_FUZZ_CALL) || !defined(RSZ_FUZZ_EXTENSION)
#error "RSZ_FUZZ_CALL and RSZ_FUZZ_EXTENSION must be defined (tests/fuzz/CMakeLists.txt)"
#endif

namespace rsz_fuzz {

// Decoders refuse images larger than this from their header, so a forged header cannot make them allocate gigabytes.
constexpr std::int64_t kMaxPixels = std::int64_t{1} << 22;

void npy(const std::string& path) {
  (void)rsz::io::read_npy_info(path);
  (void)rsz::io::read_npy(path);
}
void resample_config(const std::string& path) { (void)rsz::io::read_resample_config(path); }
void upsample2d_config(const std::string& path) { (void)rsz::io::read_upsample2d_config(path); }
void roi_align_config(const std::string& path) { (void)rsz::io::read_roi_align_config(path); }
void roi_file(const std::string& path) { (void)rsz::io::read_roi_file(path); }
void batch_file(const std::string& path) { (void)rsz::io::read_batch_file(path); }
// Dataset annotations: the format detection, then the reader (COCO JSON, Pascal VOC XML).
void annotations(const std::string& path, rsz::io::AnnotationFormat format) {
  try {
    (void)rsz::io::detect_annotation_format(path);
  } catch (const rsz::Error& e) {
    if (e.code() == rsz::ErrorCode::Internal) throw;
  }
  (void)rsz::io::read_annotations(path, format, {});
}
void coco(const std::string& path) { annotations(path, rsz::io::AnnotationFormat::Coco); }
void voc(const std::string& path) { annotations(path, rsz::io::AnnotationFormat::Voc); }
// Every image target: the header path (rsz info), the rows read band by band (JPEG, PNG: rsz resample's path) and
// the full decode. The format follows the content; the extension only matches what the seeds hold.
void image(const std::string& path) {
  rsz::io::ImageReadOptions options;
  options.max_pixels = kMaxPixels;
  try {
    (void)rsz::io::read_image_info(path, options);
  } catch (const rsz::Error& e) {
    if (e.code() == rsz::ErrorCode::Internal) throw;
  }
  try {
    if (const std::unique_ptr<rsz::io::ImageRows> rows = rsz::io::open_image_rows(path, options)) {
      const rsz::io::Image& h = rows->header();
      const auto row_bytes = static_cast<std::size_t>(h.width * h.channels * (h.bit_depth / 8));
      std::vector<std::uint8_t> band(row_bytes * 7);
      for (std::int64_t y = 0; y < h.height; y += 7) rows->read(band.data(), std::min<std::int64_t>(7, h.height - y));
    }
  } catch (const rsz::Error& e) {
    if (e.code() == rsz::ErrorCode::Internal) throw;
  }
  (void)rsz::io::read_image(path, options);
}

namespace {

std::string g_dir;

void remove_dir() {
  if (g_dir.empty()) return;
  std::error_code ignored;
  std::filesystem::remove_all(g_dir, ignored);
}

// The file every input is written to, in a folder made on first use.
const std::string& input_path() {
  static const std::string path = [] {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/rsz-fuzz-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) {
      std::perror(("rsz fuzz: mkdtemp " + pattern).c_str());
      std::abort();
    }
    g_dir = pattern;
    std::atexit(remove_dir);
    return g_dir + "/input" RSZ_FUZZ_EXTENSION;
  }();
  return path;
}

void write_file(const std::string& path, const std::uint8_t* data, std::size_t size) {
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr || (size != 0 && std::fwrite(data, 1, size, file) != size) || std::fclose(file) != 0) {
    std::perror(("rsz fuzz: cannot write " + path).c_str());
    std::abort();
  }
}

}  // namespace
}  // namespace rsz_fuzz

extern "C" int LLVMFuzzerInitialize(int*, char***) {
#ifdef RSZ_FUZZ_OPENCV_MODULE
  // The OpenCV codec module of this build, not an installed one (unless RSZ_OPENCV_MODULE says otherwise).
  ::setenv("RSZ_OPENCV_MODULE", RSZ_FUZZ_OPENCV_MODULE, /*overwrite=*/0);
#endif
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& path = rsz_fuzz::input_path();
  rsz_fuzz::write_file(path, data, size);
  try {
    rsz_fuzz::RSZ_FUZZ_CALL(path);
  } catch (const rsz::Error& e) {
    // a refused input: the expected outcome for most of them; an internal error is a bug: it aborts the run
    if (e.code() == rsz::ErrorCode::Internal) throw;
  }
  return 0;
}
