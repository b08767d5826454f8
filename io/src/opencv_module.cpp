// librsz_opencv_codecs.so: OpenCV imgcodecs behind the C interface of opencv_module.h. Every entry point catches
// everything; OpenCV's own logging is silenced so that nothing it says reaches stderr.
#include "opencv_module.h"

#include <tiffio.h>
#include <webp/demux.h>
#include <webp/mux.h>

#include <opencv2/core.hpp>
#include <opencv2/core/utils/logger.hpp>
#include <opencv2/imgcodecs.hpp>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
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

// A malloc'ed copy of `size` bytes at `data` (null for none).
unsigned char* copy_out(const void* data, std::size_t size) {
  if (data == nullptr || size == 0) return nullptr;
  auto* out = static_cast<unsigned char*>(std::malloc(size));
  if (out == nullptr) throw std::bad_alloc();
  std::memcpy(out, data, size);
  return out;
}

// ---- TIFF in memory: libtiff's client I/O over a growable buffer ----

struct MemoryTiff {
  std::vector<unsigned char> data;
  toff_t position = 0;
};

tsize_t tiff_read(thandle_t h, tdata_t buf, tsize_t size) {
  auto* f = static_cast<MemoryTiff*>(h);
  if (f->position >= f->data.size()) return 0;
  const auto n = static_cast<tsize_t>(std::min<toff_t>(static_cast<toff_t>(size), f->data.size() - f->position));
  std::memcpy(buf, f->data.data() + f->position, static_cast<std::size_t>(n));
  f->position += static_cast<toff_t>(n);
  return n;
}

tsize_t tiff_write(thandle_t h, tdata_t buf, tsize_t size) {
  auto* f = static_cast<MemoryTiff*>(h);
  const toff_t end = f->position + static_cast<toff_t>(size);
  try {  // no exception may cross libtiff's C frames
    if (end > f->data.size()) f->data.resize(end);
  } catch (...) {
    return -1;
  }
  std::memcpy(f->data.data() + f->position, buf, static_cast<std::size_t>(size));
  f->position = end;
  return size;
}

toff_t tiff_seek(thandle_t h, toff_t offset, int whence) {
  auto* f = static_cast<MemoryTiff*>(h);
  const toff_t base = whence == SEEK_CUR ? f->position : whence == SEEK_END ? f->data.size() : 0;
  f->position = base + offset;
  return f->position;
}

int tiff_close(thandle_t) { return 0; }
toff_t tiff_size(thandle_t h) { return static_cast<MemoryTiff*>(h)->data.size(); }
int tiff_map(thandle_t, tdata_t*, toff_t*) { return 0; }
void tiff_unmap(thandle_t, tdata_t, toff_t) {}

struct CloseTiff {
  void operator()(TIFF* tif) const { TIFFClose(tif); }
};
using TiffHandle = std::unique_ptr<TIFF, CloseTiff>;

struct DeleteDemux {
  void operator()(WebPDemuxer* demux) const { WebPDemuxDelete(demux); }
};

TIFF* open_tiff(MemoryTiff& file, const char* mode) {
  static std::once_flag once;  // libtiff would print its warnings and errors on stderr
  std::call_once(once, [] {
    TIFFSetErrorHandler(nullptr);
    TIFFSetWarningHandler(nullptr);
  });
  return TIFFClientOpen("memory", mode, &file, tiff_read, tiff_write, tiff_seek, tiff_close, tiff_size, tiff_map,
                        tiff_unmap);
}

int read_tiff_metadata(const unsigned char* bytes, std::size_t size, RszCvMetadata* out) {
  MemoryTiff file;
  file.data.assign(bytes, bytes + size);
  const TiffHandle handle(open_tiff(file, "rm"));
  TIFF* tif = handle.get();
  if (tif == nullptr) return RSZ_CV_FAILED;
  std::uint32_t count = 0;
  void* data = nullptr;
  if (TIFFGetField(tif, TIFFTAG_ICCPROFILE, &count, &data) == 1) {
    out->icc = copy_out(data, count);
    out->icc_size = out->icc != nullptr ? count : 0;
  }
  count = 0;
  data = nullptr;
  if (TIFFGetField(tif, TIFFTAG_XMLPACKET, &count, &data) == 1) {
    out->xmp = copy_out(data, count);
    out->xmp_size = out->xmp != nullptr ? count : 0;
  }
  return RSZ_CV_OK;
}

int add_tiff_metadata(const unsigned char* bytes, std::size_t size, const RszCvMetadata* m, unsigned char** out,
                      std::size_t* out_size) {
  MemoryTiff file;
  file.data.assign(bytes, bytes + size);
  TiffHandle handle(open_tiff(file, "r+m"));
  TIFF* tif = handle.get();
  if (tif == nullptr) return RSZ_CV_FAILED;
  bool ok = true;
  if (m->icc_size > 0) {
    ok = ok && TIFFSetField(tif, TIFFTAG_ICCPROFILE, static_cast<std::uint32_t>(m->icc_size), m->icc) == 1;
  }
  if (m->xmp_size > 0) {
    ok = ok && TIFFSetField(tif, TIFFTAG_XMLPACKET, static_cast<std::uint32_t>(m->xmp_size), m->xmp) == 1;
  }
  ok = ok && TIFFRewriteDirectory(tif) == 1;
  handle.reset();  // flushes the rewritten directory
  if (!ok) return RSZ_CV_FAILED;
  *out = copy_out(file.data.data(), file.data.size());
  *out_size = file.data.size();
  return RSZ_CV_OK;
}

// ---- WebP: chunks through libwebpdemux / libwebpmux ----

constexpr char kExifPrefix[] = "Exif\0\0";  // some writers keep JPEG's APP1 prefix in the EXIF chunk

int read_webp_metadata(const unsigned char* bytes, std::size_t size, RszCvMetadata* out) {
  const WebPData data{bytes, size};
  const std::unique_ptr<WebPDemuxer, DeleteDemux> owner(WebPDemux(&data));
  WebPDemuxer* demux = owner.get();
  if (demux == nullptr) return RSZ_CV_FAILED;
  const auto chunk = [&](const char* fourcc, unsigned char** blob, std::size_t* blob_size) {
    WebPChunkIterator it;
    if (WebPDemuxGetChunk(demux, fourcc, 1, &it) != 0) {
      const std::uint8_t* p = it.chunk.bytes;
      std::size_t n = it.chunk.size;
      if (std::strcmp(fourcc, "EXIF") == 0 && n >= 6 && std::memcmp(p, kExifPrefix, 6) == 0) {
        p += 6;
        n -= 6;
      }
      try {
        *blob = copy_out(p, n);
      } catch (...) {
        WebPDemuxReleaseChunkIterator(&it);
        throw;
      }
      *blob_size = *blob != nullptr ? n : 0;
      WebPDemuxReleaseChunkIterator(&it);
    }
  };
  chunk("ICCP", &out->icc, &out->icc_size);
  chunk("EXIF", &out->exif, &out->exif_size);
  chunk("XMP ", &out->xmp, &out->xmp_size);
  return RSZ_CV_OK;
}

int add_webp_metadata(const unsigned char* bytes, std::size_t size, const RszCvMetadata* m, unsigned char** out,
                      std::size_t* out_size) {
  const WebPData data{bytes, size};
  WebPMux* mux = WebPMuxCreate(&data, 0);
  if (mux == nullptr) return RSZ_CV_FAILED;
  bool ok = true;
  const auto set = [&](const char* fourcc, const unsigned char* blob, std::size_t blob_size) {
    if (blob_size == 0) return;
    const WebPData chunk{blob, blob_size};
    ok = ok && WebPMuxSetChunk(mux, fourcc, &chunk, 1) == WEBP_MUX_OK;
  };
  set("ICCP", m->icc, m->icc_size);
  set("EXIF", m->exif, m->exif_size);
  set("XMP ", m->xmp, m->xmp_size);
  WebPData assembled;
  WebPDataInit(&assembled);
  ok = ok && WebPMuxAssemble(mux, &assembled) == WEBP_MUX_OK;
  WebPMuxDelete(mux);
  if (!ok) {
    WebPDataClear(&assembled);
    return RSZ_CV_FAILED;
  }
  try {
    *out = copy_out(assembled.bytes, assembled.size);
  } catch (...) {
    WebPDataClear(&assembled);
    throw;
  }
  *out_size = assembled.size;
  WebPDataClear(&assembled);
  return RSZ_CV_OK;
}

void free_metadata(RszCvMetadata* m) {
  std::free(m->icc);
  std::free(m->exif);
  std::free(m->xmp);
  *m = RszCvMetadata{};
}

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

__attribute__((visibility("default"))) int rsz_cv_read_metadata(const char* ext, const unsigned char* bytes,
                                                                std::size_t size, RszCvMetadata* out, char* message,
                                                                std::size_t message_size) {
  put_message(message, message_size, "");
  *out = RszCvMetadata{};
  try {
    const std::string format(ext);
    const int status = format == ".webp"   ? read_webp_metadata(bytes, size, out)
                       : format == ".tiff" ? read_tiff_metadata(bytes, size, out)
                                           : RSZ_CV_OK;
    if (status != RSZ_CV_OK) {
      free_metadata(out);
      put_message(message, message_size, "its container cannot be parsed");
    }
    return status;
  } catch (const std::bad_alloc&) {
    free_metadata(out);
    return RSZ_CV_OUT_OF_MEMORY;
  } catch (...) {
  }
  free_metadata(out);
  return RSZ_CV_FAILED;
}

__attribute__((visibility("default"))) int rsz_cv_add_metadata(const char* ext, const unsigned char* bytes,
                                                               std::size_t size, const RszCvMetadata* metadata,
                                                               unsigned char** out, std::size_t* out_size,
                                                               char* message, std::size_t message_size) {
  put_message(message, message_size, "");
  *out = nullptr;
  *out_size = 0;
  try {
    const std::string format(ext);
    const int status = format == ".webp"   ? add_webp_metadata(bytes, size, metadata, out, out_size)
                       : format == ".tiff" ? add_tiff_metadata(bytes, size, metadata, out, out_size)
                                           : RSZ_CV_FAILED;
    if (status != RSZ_CV_OK) put_message(message, message_size, "the metadata could not be added");
    return status;
  } catch (const std::bad_alloc&) {
    return RSZ_CV_OUT_OF_MEMORY;
  } catch (...) {
  }
  put_message(message, message_size, "the metadata could not be added");
  return RSZ_CV_FAILED;
}

}  // extern "C"
