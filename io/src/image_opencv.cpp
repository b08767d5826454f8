// BMP, TIFF, WebP and PPM/PGM through OpenCV imgcodecs, reached through librsz_opencv_codecs.so (opencv_module.h),
// which is loaded with dlopen the first time a file of these formats is read or written. The module also reads and
// writes the metadata OpenCV leaves out: WebP's ICCP, EXIF and XMP chunks, TIFF's ICC profile and XMP tags. Start-up
// and PNG/JPEG jobs therefore never load OpenCV (and the GDAL, GStreamer, OpenEXR... libraries Debian's build pulls
// in).
//
// The module is looked for at $RSZ_OPENCV_MODULE when that is set (and only there), else where `cmake --install`
// puts it, else in the build tree. Pixels are decoded with IMREAD_UNCHANGED (stored depth and channels), and BGR(A)
// is swapped to RGB(A) here. A TIFF's Orientation tag is applied here, as JPEG's EXIF orientation is: OpenCV's TIFF
// decoder turns the pixels itself whatever the flags (fully or partly, by version), so it is given the file with the
// tag set to 1 and always returns the stored pixels.
#include <dlfcn.h>

#include <climits>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <new>

#include "codecs/codec.h"
#include "file_util.h"
#include "image_internal.h"
#include "opencv_module.h"

namespace rsz::io::detail {
namespace {

struct Module {
  decltype(&rsz_cv_decode) decode = nullptr;
  decltype(&rsz_cv_release) release = nullptr;
  decltype(&rsz_cv_encode) encode = nullptr;
  decltype(&rsz_cv_free) free = nullptr;
  decltype(&rsz_cv_read_metadata) read_metadata = nullptr;
  decltype(&rsz_cv_add_metadata) add_metadata = nullptr;
  std::string error;  // why it could not be loaded; empty when loaded
};

std::string load_into(Module& module, const std::string& file) {
  SharedLibrary library;
  if (!library.open(file)) return library.why().empty() ? file + ": cannot be loaded" : library.why();
  decltype(&rsz_cv_abi_version) version = nullptr;
  if (!library.resolve("rsz_cv_abi_version", version) || version() != RSZ_OPENCV_MODULE_ABI) {
    library.close();
    return file + ": not an rsz OpenCV codec module of interface version " + std::to_string(RSZ_OPENCV_MODULE_ABI);
  }
  if (!library.resolve("rsz_cv_decode", module.decode) || !library.resolve("rsz_cv_release", module.release) ||
      !library.resolve("rsz_cv_encode", module.encode) || !library.resolve("rsz_cv_free", module.free) ||
      !library.resolve("rsz_cv_read_metadata", module.read_metadata) ||
      !library.resolve("rsz_cv_add_metadata", module.add_metadata)) {
    library.close();
    return file + ": a symbol of the codec interface is missing";
  }
  return {};
}

const Module& opencv_module() {
  static Module module;
  static std::once_flag once;
  std::call_once(once, [] {
    std::vector<std::string> candidates;
    if (const char* env = std::getenv("RSZ_OPENCV_MODULE"); env != nullptr && *env != '\0') {
      candidates.emplace_back(env);
    } else {
      // Relocatable installs first: next to the object holding this code (P/lib/librsz_io.so -> P/lib/rsz/...;
      // a program in P/bin -> P/lib/rsz/...), then the configured install path, then the build tree.
      Dl_info self{};
      if (::dladdr(reinterpret_cast<void*>(&load_into), &self) != 0 && self.dli_fname != nullptr) {
        const std::filesystem::path dir = std::filesystem::path(self.dli_fname).parent_path();
        candidates.push_back((dir / "rsz" / RSZ_OPENCV_MODULE_NAME).string());
        candidates.push_back((dir.parent_path() / RSZ_INSTALL_LIBDIR / "rsz" / RSZ_OPENCV_MODULE_NAME).string());
      }
      candidates.emplace_back(RSZ_OPENCV_MODULE_INSTALLED);
      candidates.emplace_back(RSZ_OPENCV_MODULE_BUILT);
    }
    std::string first_error;
    for (const std::string& file : candidates) {
      std::error_code ec;
      if (candidates.size() > 1 && !std::filesystem::exists(file, ec)) continue;  // not there: try the next
      module.error = load_into(module, file);
      if (module.error.empty()) return;
      if (first_error.empty()) first_error = module.error;
    }
    module.error = !first_error.empty() ? first_error
                                        : "no module found (looked next to the program and library, and in " +
                                              std::string(RSZ_OPENCV_MODULE_INSTALLED) + ")";
  });
  return module;
}

// The module, or a failure naming the file, the format and the way out.
const Module& need_module(const std::string& path, const Codec& codec, const char* doing) {
  const Module& module = opencv_module();
  if (!module.error.empty()) {
    fail(ErrorCode::Io, path,
         std::string(doing) + " " + codec.display_name +
             " needs OpenCV imgcodecs through rsz's module librsz_opencv_codecs.so, which cannot be loaded (" +
             module.error +
             "); install libopencv-imgcodecs or point RSZ_OPENCV_MODULE at the module (PNG and JPEG need neither)");
  }
  return module;
}

// A decoded image owned by the module.
class Decoded {
 public:
  Decoded(const Module& module, const RszCvPixels& pixels) : module_(module), pixels_(pixels) {}
  Decoded(const Decoded&) = delete;
  Decoded& operator=(const Decoded&) = delete;
  ~Decoded() { module_.release(&pixels_); }
  const RszCvPixels& pixels() const { return pixels_; }

 private:
  const Module& module_;
  RszCvPixels pixels_;
};

constexpr int kDepth8 = 0;   // CV_8U
constexpr int kDepth16 = 2;  // CV_16U

// Decodes the stored pixels (a TIFF's Orientation tag not applied; see the top of this file).
RszCvPixels decode(const Module& module, const std::string& path, const FileBytes& bytes, const Codec& codec,
                   const HeaderFacts& facts) {
  if (bytes.size > static_cast<std::size_t>(INT_MAX)) {
    fail(ErrorCode::Format, path,
         "the file is " + std::to_string(bytes.size) + " bytes long; files of at most 2 GiB are allowed");
  }
  const std::uint8_t* data = bytes.data;
  std::vector<std::uint8_t> unturned;  // the file with its Orientation tag set to 1
  if (facts.orientation_offset != kNoOrientation) {
    try {
      unturned.assign(bytes.data, bytes.data + bytes.size);
    } catch (const std::bad_alloc&) {
      fail(ErrorCode::Io, path, "cannot read: out of memory for a copy of the " + std::to_string(bytes.size) +
                                    "-byte file");
    }
    const bool little = unturned[0] == 'I';
    unturned[facts.orientation_offset] = little ? 1 : 0;
    unturned[facts.orientation_offset + 1] = little ? 0 : 1;
    data = unturned.data();
  }
  RszCvPixels pixels{};
  char message[256];
  const int status = module.decode(data, bytes.size, &pixels, message, sizeof message);
  if (status == RSZ_CV_OUT_OF_MEMORY) {
    fail(ErrorCode::Io, path, "cannot read: out of memory for a " + size_text(facts.width, facts.height) + " image");
  }
  if (status != RSZ_CV_OK) {
    fail_corrupt(path, codec,
                 message[0] != '\0' ? "OpenCV cannot decode it (" + std::string(message) + ")"
                                    : std::string("OpenCV cannot decode its pixel data"));
  }
  return pixels;
}

void check_decoded(const std::string& path, const Codec& codec, const HeaderFacts& facts, const RszCvPixels& p) {
  if (p.depth != kDepth8 && p.depth != kDepth16) {
    static const char* const kDepths[] = {"8-bit unsigned", "8-bit signed", "16-bit unsigned", "16-bit signed",
                                          "32-bit signed",  "32-bit float", "64-bit float",    "16-bit float"};
    fail(ErrorCode::Format, path,
         std::string(codec.display_name) + " samples of type " + kDepths[p.depth & 7] +
             " are not supported; 8- or 16-bit unsigned samples are allowed");
  }
  if (p.channels < 1 || p.channels > 4) {
    fail(ErrorCode::Format, path,
         std::string(codec.display_name) + " image with " + std::to_string(p.channels) +
             " channels is not supported; 1 to 4 channels are allowed");
  }
  if (p.width != facts.width || p.height != facts.height) {
    fail_corrupt(path, codec,
                 "the header gives size " + size_text(facts.width, facts.height) + " but the pixels decode as " +
                     size_text(p.width, p.height));
  }
}

// Copies the stored BGR(A) `pixels` into `out` in RGB(A) order, each pixel where `orient` puts it in the upright
// image (orientation 1: where it is).
template <typename T>
void copy_pixels(const RszCvPixels& pixels, const Orientation& orient, std::vector<T, SampleAllocator<T>>& out) {
  const int c = pixels.channels;
  out.resize(static_cast<std::size_t>(pixels.width) * static_cast<std::size_t>(pixels.height) *
             static_cast<std::size_t>(c));
  const std::int64_t step = orient.x_step(c);
  for (int y = 0; y < pixels.height; ++y) {
    const T* src = reinterpret_cast<const T*>(pixels.data + pixels.step * static_cast<std::size_t>(y));
    T* dst = out.data() + orient.row_start(y, c);
    for (int x = 0; x < pixels.width; ++x, src += c, dst += step) {
      if (c >= 3) {
        dst[0] = src[2];
        dst[1] = src[1];
        dst[2] = src[0];
        if (c == 4) dst[3] = src[3];
      } else {
        dst[0] = src[0];
        if (c == 2) dst[1] = src[1];
      }
    }
  }
}

// `image` in BGR(A) order with `out_channels` channels (gray replicated when the format needs colour).
template <typename T>
std::vector<T> to_bgr(const Image& image, const std::vector<T, SampleAllocator<T>>& data, int out_channels) {
  std::vector<T> out(static_cast<std::size_t>(image.width * image.height * out_channels));
  const int c = image.channels;
  const T* src = data.data();
  T* dst = out.data();
  for (std::int64_t i = 0; i < image.width * image.height; ++i, src += c, dst += out_channels) {
    if (c == 1) {
      for (int k = 0; k < out_channels; ++k) dst[k] = src[0];
    } else {
      dst[0] = src[2];
      dst[1] = src[1];
      dst[2] = src[0];
      if (c == 4) dst[3] = src[3];
    }
  }
  return out;
}

// The ICC profile, EXIF and XMP of a WebP or TIFF file into `image` (formats without metadata: nothing).
void read_metadata(const Module& module, const std::string& path, const FileBytes& bytes, const Codec& codec,
                   Image& image) {
  if (codec.metadata_read == 0) return;
  RszCvMetadata m{};
  char message[256];
  const int status = module.read_metadata(codec.module_ext, bytes.data, bytes.size, &m, message, sizeof message);
  if (status == RSZ_CV_OUT_OF_MEMORY) fail(ErrorCode::Io, path, "cannot read its metadata: out of memory");
  if (status != RSZ_CV_OK) fail_corrupt(path, codec, std::string("its metadata cannot be read: ") + message);
  const auto take = [&](unsigned char* blob, std::size_t size, std::string& into) {
    if (blob != nullptr) into.assign(reinterpret_cast<const char*>(blob), size);
    module.free(blob);
  };
  take(m.icc, m.icc_size, image.icc_profile);
  take(m.exif, m.exif_size, image.exif);
  take(m.xmp, m.xmp_size, image.xmp);
}

// `encoded` with the image's metadata added where the format holds it: WebP the ICC profile (when it fits the
// written channels), EXIF and XMP; TIFF the ICC profile and XMP.
void add_metadata(const Module& module, const std::string& path, const Image& image, const Codec& codec,
                  int out_channels, std::vector<std::uint8_t>& encoded) {
  if (codec.metadata_written == 0) return;
  const bool icc = (codec.metadata_written & kIcc) && profile_fits(image.icc_profile, out_channels);
  const bool exif = (codec.metadata_written & kExif) && !image.exif.empty();
  const bool xmp = (codec.metadata_written & kXmp) && !image.xmp.empty();
  if (!icc && !exif && !xmp) return;
  const auto blob = [](const std::string& s) {
    return reinterpret_cast<unsigned char*>(const_cast<char*>(s.data()));
  };
  RszCvMetadata m{};
  if (icc) {
    m.icc = blob(image.icc_profile);
    m.icc_size = image.icc_profile.size();
  }
  if (exif) {
    m.exif = blob(image.exif);
    m.exif_size = image.exif.size();
  }
  if (xmp) {
    m.xmp = blob(image.xmp);
    m.xmp_size = image.xmp.size();
  }
  unsigned char* out = nullptr;
  std::size_t out_size = 0;
  char message[256];
  const int status =
      module.add_metadata(codec.module_ext, encoded.data(), encoded.size(), &m, &out, &out_size, message,
                          sizeof message);
  if (status == RSZ_CV_OK) {
    try {
      encoded.assign(out, out + out_size);
    } catch (...) {
      module.free(out);
      throw;
    }
    module.free(out);
    return;
  }
  module.free(out);
  if (status == RSZ_CV_OUT_OF_MEMORY) fail(ErrorCode::Io, path, "cannot write: out of memory while adding metadata");
  fail(ErrorCode::Io, path,
       std::string("cannot write the ") + codec.display_name + " image's metadata: " + message +
           " (--strip writes the image without it)");
}

}  // namespace

Image read_opencv(const Codec& codec, const std::string& path, const FileBytes& bytes,
                  const ImageReadOptions& options) {
  const HeaderFacts facts = codec.probe(codec, path, bytes, /*whole=*/true, options);
  const Module& module = need_module(path, codec, "reading");
  const Decoded decoded(module, decode(module, path, bytes, codec, facts));
  const RszCvPixels& pixels = decoded.pixels();
  check_decoded(path, codec, facts, pixels);
  const Orientation orient(options.apply_exif_orientation ? facts.orientation : 1, pixels.width, pixels.height);
  Image image;
  image.width = orient.out_width;
  image.height = orient.out_height;
  image.channels = pixels.channels;
  try {
    if (pixels.depth == kDepth16) {
      image.bit_depth = 16;
      copy_pixels(pixels, orient, image.data16);
    } else {
      image.bit_depth = 8;
      copy_pixels(pixels, orient, image.data8);
    }
  } catch (const std::bad_alloc&) {
    fail(ErrorCode::Io, path, "cannot read: out of memory for a " + size_text(facts.width, facts.height) + " image");
  }
  read_metadata(module, path, bytes, codec, image);
  return image;
}

void decoded_facts(const Codec& codec, const std::string& path, const FileBytes& bytes, HeaderFacts& facts) {
  const Module& module = need_module(path, codec, "reading");
  const Decoded decoded(module, decode(module, path, bytes, codec, facts));
  check_decoded(path, codec, facts, decoded.pixels());
  facts.channels = decoded.pixels().channels;
  facts.bit_depth = decoded.pixels().depth == kDepth16 ? 16 : 8;
}

std::vector<std::uint8_t> encode_opencv(const Codec& codec, const std::string& path, const Image& image,
                                        const std::vector<int>& params) {
  if (const std::string reason = write_problem(codec, image); !reason.empty()) fail(ErrorCode::Format, path, reason);
  const int out_channels = codec.gray_as_rgb && image.channels == 1 ? 3 : image.channels;
  const char* ext = codec.module_ext;
  if (ext == nullptr) throw InternalError("rsz::io::encode_opencv: unexpected format");
  const Module& module = need_module(path, codec, "writing");
  unsigned char* encoded = nullptr;
  std::size_t encoded_size = 0;
  char message[256];
  int status = RSZ_CV_OUT_OF_MEMORY;
  try {
    const bool deep = image.bit_depth == 16;
    std::vector<std::uint8_t> bgr8;
    std::vector<std::uint16_t> bgr16;
    if (deep) {
      bgr16 = to_bgr(image, image.data16, out_channels);
    } else {
      bgr8 = to_bgr(image, image.data8, out_channels);
    }
    const std::size_t bytes_per_sample = deep ? 2 : 1;
    RszCvPixels pixels{};
    pixels.width = static_cast<int>(image.width);
    pixels.height = static_cast<int>(image.height);
    pixels.channels = out_channels;
    pixels.depth = deep ? kDepth16 : kDepth8;
    pixels.data = deep ? reinterpret_cast<unsigned char*>(bgr16.data()) : bgr8.data();
    pixels.step = static_cast<std::size_t>(image.width) * static_cast<std::size_t>(out_channels) * bytes_per_sample;
    status = module.encode(ext, &pixels, params.data(), static_cast<int>(params.size()), &encoded, &encoded_size,
                           message, sizeof message);
    if (status == RSZ_CV_OK) {
      std::vector<std::uint8_t> out(encoded, encoded + encoded_size);
      module.free(encoded);
      encoded = nullptr;
      add_metadata(module, path, image, codec, out_channels, out);
      return out;
    }
  } catch (const std::bad_alloc&) {
    status = RSZ_CV_OUT_OF_MEMORY;
  }
  module.free(encoded);
  if (status == RSZ_CV_OUT_OF_MEMORY) {
    fail(ErrorCode::Io, path,
         std::string("cannot write: out of memory while encoding the ") + codec.display_name + " image");
  }
  fail(ErrorCode::Io, path, std::string("cannot encode the ") + codec.display_name + " image: " + message);
}

}  // namespace rsz::io::detail
