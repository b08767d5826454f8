// librsz_opencv_codecs.so: OpenCV imgcodecs behind the C interface of opencv_module.h. Every entry point catches
// everything; OpenCV's own logging is silenced so that nothing it says reaches stderr.
#include "opencv_module.h"

#include <opencv2/core.hpp>
#include <opencv2/core/utils/logger.hpp>
#include <opencv2/imgcodecs.hpp>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <mutex>
#include <new>
#include <streambuf>
#include <string>
#include <vector>

namespace {

void silence_opencv() {
  static std::once_flag once;
  std::call_once(once, [] { cv::utils::logging::setLogLevel(cv::utils::logging::LOG_LEVEL_SILENT); });
}

void put_message(char* message, std::size_t size, const std::string& text) {
  if (message == nullptr || size == 0) return;
  std::size_t n = 0;
  for (; n + 1 < size && n < text.size(); ++n) message[n] = text[n] == '\n' || text[n] == '\r' ? ' ' : text[n];
  while (n > 0 && message[n - 1] == ' ') --n;
  message[n] = '\0';
}

// OpenCV's imdecode/imencode report a decoder's exception by writing to std::cerr directly, past its logger. While
// any thread is inside OpenCV, std::cerr writes into a buffer that drops everything (rsz itself prints through C
// stdio, never std::cerr). The first thread in installs it and the last one out restores the old buffer, so the swap
// never happens while OpenCV is writing.
class DiscardBuffer : public std::streambuf {
 protected:
  int overflow(int c) override { return c == traits_type::eof() ? 0 : c; }
  std::streamsize xsputn(const char*, std::streamsize n) override { return n; }
};

class QuietCerr {
 public:
  QuietCerr() {
    const std::lock_guard<std::mutex> lock(mutex());
    if (state().users++ == 0) state().saved = std::cerr.rdbuf(&state().discard);
  }
  ~QuietCerr() {
    const std::lock_guard<std::mutex> lock(mutex());
    if (--state().users == 0) std::cerr.rdbuf(state().saved);
  }
  QuietCerr(const QuietCerr&) = delete;
  QuietCerr& operator=(const QuietCerr&) = delete;

 private:
  struct State {
    int users = 0;
    std::streambuf* saved = nullptr;
    DiscardBuffer discard;
  };
  static std::mutex& mutex() {
    static std::mutex m;
    return m;
  }
  static State& state() {
    static State s;
    return s;
  }
};

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int rsz_cv_abi_version(void) { return RSZ_OPENCV_MODULE_ABI; }

__attribute__((visibility("default"))) int rsz_cv_decode(const unsigned char* bytes, std::size_t size,
                                                         RszCvPixels* out, char* message, std::size_t message_size) {
  put_message(message, message_size, "");
  try {
    silence_opencv();
    const QuietCerr quiet;
    const cv::Mat buffer(1, static_cast<int>(size), CV_8UC1, const_cast<unsigned char*>(bytes));
    auto* mat = new cv::Mat(cv::imdecode(buffer, cv::IMREAD_UNCHANGED));
    if (mat->empty()) {
      delete mat;
      return RSZ_CV_FAILED;
    }
    out->width = mat->cols;
    out->height = mat->rows;
    out->channels = mat->dims == 2 ? mat->channels() : 0;
    out->depth = mat->depth();
    out->data = mat->data;
    out->step = mat->step[0];
    out->owner = mat;
    return RSZ_CV_OK;
  } catch (const cv::Exception& e) {
    put_message(message, message_size, e.err);
  } catch (const std::bad_alloc&) {
    return RSZ_CV_OUT_OF_MEMORY;
  } catch (...) {
  }
  return RSZ_CV_FAILED;
}

__attribute__((visibility("default"))) void rsz_cv_release(RszCvPixels* pixels) {
  delete static_cast<cv::Mat*>(pixels->owner);
  pixels->owner = nullptr;
  pixels->data = nullptr;
}

__attribute__((visibility("default"))) int rsz_cv_encode(const char* ext, const RszCvPixels* pixels,
                                                         const int* params, int param_count, unsigned char** out,
                                                         std::size_t* out_size, char* message,
                                                         std::size_t message_size) {
  put_message(message, message_size, "");
  *out = nullptr;
  *out_size = 0;
  try {
    silence_opencv();
    const QuietCerr quiet;
    const cv::Mat mat(pixels->height, pixels->width, CV_MAKETYPE(pixels->depth, pixels->channels), pixels->data,
                      pixels->step);
    std::vector<uchar> encoded;
    if (!cv::imencode(ext, mat, encoded, std::vector<int>(params, params + param_count)) || encoded.empty()) {
      put_message(message, message_size, "OpenCV refused it");
      return RSZ_CV_FAILED;
    }
    *out = static_cast<unsigned char*>(std::malloc(encoded.size()));
    if (*out == nullptr) return RSZ_CV_OUT_OF_MEMORY;
    std::memcpy(*out, encoded.data(), encoded.size());
    *out_size = encoded.size();
    return RSZ_CV_OK;
  } catch (const cv::Exception& e) {
    put_message(message, message_size, "OpenCV failed (" + e.err + ")");
  } catch (const std::bad_alloc&) {
    return RSZ_CV_OUT_OF_MEMORY;
  } catch (...) {
  }
  return RSZ_CV_FAILED;
}

__attribute__((visibility("default"))) void rsz_cv_free(unsigned char* bytes) { std::free(bytes); }

}  // extern "C"
