// JPEG through libjpeg-turbo against OpenCV imgcodecs, which rsz used for JPEG before: every JPEG variant of
// tests/data/images (made by tests/data/make_jpeg_fixtures.py) and rsz's own files must decode to the same pixels,
// and rsz's encoder must write the same bytes OpenCV writes for the same pixels and quality. OpenCV is reached
// through rsz's own module (librsz_opencv_codecs.so). Also: the module is loaded only for the formats that need it,
// and a missing module is a one-line error that names it, for those formats only.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <memory>
#include <vector>

#include "opencv_module.h"
#include "rsz/error.h"
#include "rsz/io/colour.h"
#include "rsz/io/image.h"
#include "support/scratch_test.h"

namespace rsz::io {
namespace {

std::string fixture(const std::string& name) { return std::string(RSZ_TEST_DATA_DIR) + "/images/" + name; }

std::vector<unsigned char> file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// OpenCV's functions, from the module the build made.
struct OpenCv {
  OpenCv() {
    handle = ::dlopen(RSZ_OPENCV_MODULE_PATH, RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) return;
    decode = reinterpret_cast<decltype(decode)>(::dlsym(handle, "rsz_cv_decode"));
    release = reinterpret_cast<decltype(release)>(::dlsym(handle, "rsz_cv_release"));
    encode = reinterpret_cast<decltype(encode)>(::dlsym(handle, "rsz_cv_encode"));
    free = reinterpret_cast<decltype(free)>(::dlsym(handle, "rsz_cv_free"));
  }
  void* handle = nullptr;
  decltype(&rsz_cv_decode) decode = nullptr;
  decltype(&rsz_cv_release) release = nullptr;
  decltype(&rsz_cv_encode) encode = nullptr;
  decltype(&rsz_cv_free) free = nullptr;
};

const OpenCv& opencv() {
  static const OpenCv instance;
  return instance;
}

// OpenCV's decoding of a file, as RGB(A) samples.
Image opencv_decode(const std::string& path) {
  const std::vector<unsigned char> bytes = file_bytes(path);
  RszCvPixels p{};
  char message[256];
  EXPECT_EQ(opencv().decode(bytes.data(), bytes.size(), &p, message, sizeof message), RSZ_CV_OK) << message;
  Image image;
  image.width = p.width;
  image.height = p.height;
  image.channels = p.channels;
  for (int y = 0; y < p.height; ++y) {
    const unsigned char* row = p.data + p.step * static_cast<std::size_t>(y);
    for (int x = 0; x < p.width; ++x) {
      const unsigned char* px = row + x * p.channels;
      if (p.channels == 3) {
        image.data8.insert(image.data8.end(), {px[2], px[1], px[0]});
      } else {
        image.data8.insert(image.data8.end(), px, px + p.channels);
      }
    }
  }
  opencv().release(&p);
  return image;
}

void expect_same_pixels(const Image& a, const Image& b, const std::string& what) {
  ASSERT_EQ(a.width, b.width) << what;
  ASSERT_EQ(a.height, b.height) << what;
  ASSERT_EQ(a.channels, b.channels) << what;
  ASSERT_EQ(a.data8.size(), b.data8.size()) << what;
  std::size_t differing = 0;
  for (std::size_t i = 0; i < a.data8.size(); ++i) differing += a.data8[i] != b.data8[i];
  EXPECT_EQ(differing, 0u) << what << ": samples that differ";
}

Image pattern(std::int64_t width, std::int64_t height, int channels) {
  Image image;
  image.width = width;
  image.height = height;
  image.channels = channels;
  std::uint32_t state = 12345;
  for (std::int64_t i = 0; i < width * height * channels; ++i) {
    state = state * 1664525u + 1013904223u;
    const auto smooth = static_cast<std::uint32_t>((i / channels % width) * 3 + (i / channels / width) * 2);
    image.data8.push_back(static_cast<std::uint8_t>((smooth + (state >> 28)) & 0xff));
  }
  return image;
}

class JpegCodecTest : public test::ScratchTest {
 protected:
  void SetUp() override {
    ScratchTest::SetUp();
    if (opencv().decode == nullptr) GTEST_SKIP() << "OpenCV module not built: " << RSZ_OPENCV_MODULE_PATH;
  }
};

TEST_F(JpegCodecTest, EveryFixtureDecodesToOpenCvsPixels) {
  for (const char* name : {"jpeg_420.jpg", "jpeg_422.jpg", "jpeg_444.jpg", "jpeg_progressive.jpg", "jpeg_gray.jpg",
                           "jpeg_cmyk.jpg"}) {
    const Image ours = read_image(fixture(name));
    expect_same_pixels(ours, opencv_decode(fixture(name)), name);
    EXPECT_EQ(ours.channels, std::string(name) == "jpeg_gray.jpg" ? 1 : 3) << name;
  }
}

TEST_F(JpegCodecTest, EncodesOpenCvsBytesAndDecodesThemAlike) {
  for (const int channels : {3, 1}) {
    for (const int quality : {95, 75, 30, 100}) {
      const Image image = pattern(83, 61, channels);
      const std::string file = path("q" + std::to_string(quality) + "_" + std::to_string(channels) + ".jpg");
      write_image(file, image, quality);
      const std::vector<unsigned char> ours = file_bytes(file);
      // OpenCV's encoding of the same pixels (BGR order).
      std::vector<unsigned char> bgr(image.data8.begin(), image.data8.end());
      if (channels == 3) {
        for (std::size_t i = 0; i < bgr.size(); i += 3) std::swap(bgr[i], bgr[i + 2]);
      }
      RszCvPixels p{83, 61, channels, 0, bgr.data(), static_cast<std::size_t>(83 * channels), nullptr};
      const int params[] = {1 /* cv::IMWRITE_JPEG_QUALITY */, quality};
      unsigned char* encoded = nullptr;
      std::size_t size = 0;
      char message[256];
      ASSERT_EQ(opencv().encode(".jpg", &p, params, 2, &encoded, &size, message, sizeof message), RSZ_CV_OK);
      const std::vector<unsigned char> theirs(encoded, encoded + size);
      opencv().free(encoded);
      EXPECT_EQ(ours, theirs) << "quality " << quality << ", " << channels << " channels";
      expect_same_pixels(read_image(file), opencv_decode(file), file);
    }
  }
}

TEST_F(JpegCodecTest, ExifOrientationIsAppliedRowByRow) {
  // Each orientation's upright image equals OpenCV's stored pixels turned by hand.
  const Image stored = read_image(fixture("jpeg_444.jpg"));
  const std::vector<unsigned char> bytes = file_bytes(fixture("jpeg_444.jpg"));
  for (int orientation = 1; orientation <= 8; ++orientation) {
    // An APP1 Exif segment (big-endian TIFF, one IFD entry: Orientation SHORT) right after SOI.
    const unsigned char o = static_cast<unsigned char>(orientation);
    const std::vector<unsigned char> app1 = {0xff, 0xe1, 0x00, 0x22, 'E', 'x', 'i', 'f', 0, 0, 'M', 'M', 0, 42,
                                             0,    0,    0,    8,    0,   1,   0x01, 0x12, 0, 3, 0, 0, 0, 1,
                                             0,    o,    0,    0,    0,   0,   0,   0};
    std::vector<unsigned char> file(bytes.begin(), bytes.begin() + 2);
    file.insert(file.end(), app1.begin(), app1.end());
    file.insert(file.end(), bytes.begin() + 2, bytes.end());
    const std::string name = path("o" + std::to_string(orientation) + ".jpg");
    std::ofstream(name, std::ios::binary).write(reinterpret_cast<const char*>(file.data()),
                                                static_cast<std::streamsize>(file.size()));
    const Image upright = read_image(name);
    const bool transpose = orientation >= 5;
    const std::int64_t w = stored.width, h = stored.height;
    ASSERT_EQ(upright.width, transpose ? h : w);
    ASSERT_EQ(upright.height, transpose ? w : h);
    std::size_t differing = 0;
    for (std::int64_t y = 0; y < h; ++y) {
      for (std::int64_t x = 0; x < w; ++x) {
        std::int64_t ux = x, uy = y;
        switch (orientation) {
          case 2: ux = w - 1 - x; break;
          case 3: ux = w - 1 - x, uy = h - 1 - y; break;
          case 4: uy = h - 1 - y; break;
          case 5: ux = y, uy = x; break;
          case 6: ux = h - 1 - y, uy = x; break;
          case 7: ux = h - 1 - y, uy = w - 1 - x; break;
          case 8: ux = y, uy = w - 1 - x; break;
          default: break;
        }
        for (int c = 0; c < 3; ++c) {
          differing += stored.data8[static_cast<std::size_t>((y * w + x) * 3 + c)] !=
                       upright.data8[static_cast<std::size_t>((uy * upright.width + ux) * 3 + c)];
        }
      }
    }
    EXPECT_EQ(differing, 0u) << "orientation " << orientation;
  }
}

// io::open_image_rows: a sequential JPEG read band by band gives read_image's rows (gray, 4:2:0, 4:2:2, 4:4:4,
// CMYK made RGB, in bands of 1, 7 and 64 rows); the header says so (rows_in_order). A progressive JPEG, whose
// coefficients libjpeg buffers whole, and an EXIF-oriented one, whose rows do not come in order, give no rows; with
// --no-exif the oriented one does. Past the last row is refused.
TEST_F(JpegCodecTest, SequentialJpegsAreReadBandByBand) {
  for (const char* name : {"jpeg_gray.jpg", "jpeg_420.jpg", "jpeg_422.jpg", "jpeg_444.jpg", "jpeg_cmyk.jpg"}) {
    const Image whole = read_image(fixture(name));
    EXPECT_TRUE(read_image_info(fixture(name)).rows_in_order) << name;
    for (const std::int64_t band : {std::int64_t{1}, std::int64_t{7}, std::int64_t{64}}) {
      const std::unique_ptr<ImageRows> rows = open_image_rows(fixture(name));
      ASSERT_NE(rows, nullptr) << name;
      const Image& header = rows->header();
      ASSERT_EQ(header.width, whole.width) << name;
      ASSERT_EQ(header.height, whole.height) << name;
      ASSERT_EQ(header.channels, whole.channels) << name;
      const auto row_bytes = static_cast<std::size_t>(header.width * header.channels);
      std::vector<std::uint8_t> got(row_bytes * static_cast<std::size_t>(header.height));
      while (rows->next_row() < header.height) {
        const std::int64_t count = std::min(band, header.height - rows->next_row());
        rows->read(got.data() + row_bytes * static_cast<std::size_t>(rows->next_row()), count);
      }
      EXPECT_TRUE(std::equal(got.begin(), got.end(), whole.data8.begin())) << name << " in bands of " << band;
      EXPECT_THROW(rows->read(got.data(), 1), Error) << name;
    }
  }
  EXPECT_FALSE(read_image_info(fixture("jpeg_progressive.jpg")).rows_in_order);
  EXPECT_EQ(open_image_rows(fixture("jpeg_progressive.jpg")), nullptr);
  const std::vector<unsigned char> bytes = file_bytes(fixture("jpeg_444.jpg"));
  const std::vector<unsigned char> app1 = {0xff, 0xe1, 0x00, 0x22, 'E', 'x', 'i', 'f', 0, 0, 'M', 'M', 0, 42,
                                           0,    0,    0,    8,    0,   1,   0x01, 0x12, 0, 3, 0, 0, 0, 1,
                                           0,    6,    0,    0,    0,   0,   0,   0};
  std::vector<unsigned char> file(bytes.begin(), bytes.begin() + 2);
  file.insert(file.end(), app1.begin(), app1.end());
  file.insert(file.end(), bytes.begin() + 2, bytes.end());
  std::ofstream(path("turned.jpg"), std::ios::binary)
      .write(reinterpret_cast<const char*>(file.data()), static_cast<std::streamsize>(file.size()));
  EXPECT_FALSE(read_image_info(path("turned.jpg")).rows_in_order);
  EXPECT_EQ(open_image_rows(path("turned.jpg")), nullptr);
  ImageReadOptions stored;
  stored.apply_exif_orientation = false;
  EXPECT_TRUE(read_image_info(path("turned.jpg"), stored).rows_in_order);
  EXPECT_NE(open_image_rows(path("turned.jpg"), stored), nullptr);
  EXPECT_NE(open_image_rows(fixture("../images/rgb16.png")), nullptr);  // a PNG without alpha, not interlaced
}

// io::open_image_rows from bytes read already (the GPU jobs read each file once): the rows and header of the file
// read by path, for every sequential JPEG; the same refusals (progressive, EXIF-oriented); null for a PNG (read as it
// decodes); one-line errors naming the path for empty, unknown and damaged bytes, and above max_file_bytes.
TEST_F(JpegCodecTest, RowsFromBytesReadAlreadyAreTheFilesRows) {
  const auto bytes_of = [](const std::string& file) {
    const std::vector<unsigned char> b = file_bytes(file);
    return std::make_shared<const std::string>(b.begin(), b.end());
  };
  const auto all_rows = [](ImageRows& rows) {
    const Image& header = rows.header();
    std::vector<std::uint8_t> got(static_cast<std::size_t>(header.width * header.height * header.channels));
    rows.read(got.data(), header.height);
    return got;
  };
  for (const char* name : {"jpeg_gray.jpg", "jpeg_420.jpg", "jpeg_422.jpg", "jpeg_444.jpg", "jpeg_cmyk.jpg"}) {
    const std::unique_ptr<ImageRows> by_path = open_image_rows(fixture(name));
    const std::unique_ptr<ImageRows> by_bytes = open_image_rows("named.jpg", bytes_of(fixture(name)));
    ASSERT_NE(by_bytes, nullptr) << name;
    EXPECT_EQ(by_bytes->header().width, by_path->header().width) << name;
    EXPECT_EQ(by_bytes->header().height, by_path->header().height) << name;
    EXPECT_EQ(by_bytes->header().channels, by_path->header().channels) << name;
    EXPECT_EQ(by_bytes->header().icc_profile, by_path->header().icc_profile) << name;
    EXPECT_EQ(by_bytes->header().exif, by_path->header().exif) << name;
    EXPECT_EQ(all_rows(*by_bytes), all_rows(*by_path)) << name;
  }
  EXPECT_EQ(open_image_rows("p.jpg", bytes_of(fixture("jpeg_progressive.jpg"))), nullptr);
  EXPECT_EQ(open_image_rows("p.png", bytes_of(fixture("../images/rgb16.png"))), nullptr);
  const auto message = [](const std::string& text, const ImageReadOptions& options = {}) {
    try {
      (void)open_image_rows("in.jpg", std::make_shared<const std::string>(text), options);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::Format) << e.what();
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_NE(message("").find("in.jpg: the file is empty"), std::string::npos) << message("");
  EXPECT_NE(message("plain text").find("in.jpg: not an image file of a known format"), std::string::npos);
  std::string cut = *bytes_of(fixture("jpeg_444.jpg"));
  cut.resize(40);
  EXPECT_EQ(message(cut).rfind("in.jpg: ", 0), 0u) << message(cut);
  EXPECT_EQ(message(cut).find('\n'), std::string::npos) << message(cut);
  ImageReadOptions small;
  small.max_file_bytes = 100;
  const std::string whole = *bytes_of(fixture("jpeg_444.jpg"));
  EXPECT_NE(message(whole, small).find("more than max_file_bytes (100)"), std::string::npos) << message(whole, small);
}

TEST_F(JpegCodecTest, CorruptScanDataIsAFailedReadNotAWarning) {
  // A JPEG cut in the middle of its scan data, with the end-of-image marker put back: the header walk accepts it,
  // libjpeg warns ("premature end of data segment"); rsz turns that into one error line and prints nothing.
  std::vector<unsigned char> bytes = file_bytes(fixture("jpeg_444.jpg"));
  bytes.resize(bytes.size() * 2 / 3);
  bytes.push_back(0xff);
  bytes.push_back(0xd9);
  const std::string file = path("cut.jpg");
  std::ofstream(file, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  try {
    (void)read_image(file);
    ADD_FAILURE() << "a corrupt JPEG was decoded";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_EQ(e.code(), ErrorCode::Format) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    EXPECT_NE(m.find("libjpeg: Corrupt JPEG data"), std::string::npos) << m;
    EXPECT_EQ(m.rfind(file, 0), 0u) << m;
  }
}

// `bytes` with `inserted` put in before the `nth` (0: first, -1: last) marker FF `marker`.
std::vector<unsigned char> insert_before(const std::vector<unsigned char>& bytes, unsigned char marker, int nth,
                                         const std::vector<unsigned char>& inserted) {
  std::vector<std::size_t> found;
  for (std::size_t i = 2; i + 1 < bytes.size(); ++i) {
    if (bytes[i] == 0xff && bytes[i + 1] == marker) found.push_back(i);
  }
  EXPECT_FALSE(found.empty()) << "no marker FF " << std::hex << int{marker};
  if (found.empty()) return bytes;
  const std::size_t at = nth < 0 ? found.back() : found.at(static_cast<std::size_t>(nth));
  std::vector<unsigned char> out(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(at));
  out.insert(out.end(), inserted.begin(), inserted.end());
  out.insert(out.end(), bytes.begin() + static_cast<std::ptrdiff_t>(at), bytes.end());
  return out;
}

void write_bytes(const std::string& file, const std::vector<unsigned char>& bytes) {
  std::ofstream(file, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

TEST_F(JpegCodecTest, ExtraneousBytesBeforeAMarkerAreSkippedAsLibjpegSkipsThem) {
  // Stray bytes where a marker should start (libjpeg: "Corrupt JPEG data: N extraneous bytes before marker 0xNN",
  // common in scraped datasets) are skipped whole: the pixels are exactly the clean file's, as ImageMagick, vips
  // and Pillow read them. Before the frame header, a table, a scan (also between progressive scans) and the end.
  const std::vector<unsigned char> garbage = {0x12, 0x34, 0x56};
  const std::vector<unsigned char> with_zero = {0x01, 0xff, 0x00, 0x02};  // an FF 00 pair is skipped too
  const struct {
    const char* fixture;
    unsigned char marker;
    int nth;
    const std::vector<unsigned char>& inserted;
  } cases[] = {{"jpeg_444.jpg", 0xc0, 0, garbage},     {"jpeg_444.jpg", 0xc4, 0, with_zero},
               {"jpeg_444.jpg", 0xda, 0, garbage},     {"jpeg_444.jpg", 0xd9, -1, garbage},
               {"jpeg_progressive.jpg", 0xda, -1, garbage}, {"jpeg_gray.jpg", 0xda, 0, with_zero}};
  int n = 0;
  for (const auto& c : cases) {
    const std::string what = std::string(c.fixture) + " before FF " + std::to_string(int{c.marker});
    const Image clean = read_image(fixture(c.fixture));
    const std::string file = path("stray" + std::to_string(n++) + ".jpg");
    write_bytes(file, insert_before(file_bytes(fixture(c.fixture)), c.marker, c.nth, c.inserted));
    try {
      expect_same_pixels(read_image(file), clean, what);
      const ImageInfo info = read_image_info(file);
      EXPECT_EQ(info.width, clean.width) << what;
      EXPECT_EQ(info.height, clean.height) << what;
    } catch (const Error& e) {
      ADD_FAILURE() << what << ": " << e.what();
    }
  }
}

TEST_F(JpegCodecTest, TruncatedJpegsStillFailWithStrayBytes) {
  // Skipping stray bytes recovers nothing that is missing: a file cut in its scan data is refused as truncated, and
  // with its end-of-image marker put back libjpeg's "premature end of data segment" stays a failure.
  const std::vector<unsigned char> stray =
      insert_before(file_bytes(fixture("jpeg_444.jpg")), 0xda, 0, std::vector<unsigned char>{0x12, 0x34, 0x56});
  std::vector<unsigned char> cut(stray.begin(), stray.begin() + static_cast<std::ptrdiff_t>(stray.size() * 2 / 3));
  const std::string truncated = path("truncated.jpg");
  write_bytes(truncated, cut);
  cut.push_back(0xff);
  cut.push_back(0xd9);
  const std::string ended = path("ended.jpg");
  write_bytes(ended, cut);
  const struct {
    std::string file;
    std::string message;  // after the path
  } cases[] = {
      {truncated, ": the JPEG file is truncated: it ends after " + std::to_string(cut.size() - 2) +
                      " bytes, before the end-of-image marker (FF D9); a complete JPEG file is required"},
      {ended, ": not a valid JPEG file: libjpeg: Corrupt JPEG data: premature end of data segment; a valid JPEG file "
              "is required"}};
  for (const auto& [file, message] : cases) {
    try {
      (void)read_image(file);
      ADD_FAILURE() << file << ": a truncated JPEG was decoded";
    } catch (const Error& e) {
      const std::string m = e.what();
      EXPECT_EQ(e.code(), ErrorCode::Format) << m;
      EXPECT_EQ(m.find('\n'), std::string::npos) << m;
      EXPECT_EQ(m, file + message);
    }
  }
}

// The module is loaded at first use only, and without it BMP/TIFF/WebP/PPM fail cleanly while PNG and JPEG work.
// Each case runs in a child process so that this process's module state stays untouched.
int in_child(const std::function<int()>& body) {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(body());
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 100;
}

bool module_loaded() {
  return ::dlopen(RSZ_OPENCV_MODULE_PATH, RTLD_NOW | RTLD_NOLOAD) != nullptr;
}

// These checks need a process that has not loaded the module yet (ctest runs each test in a process of its own).
class OpenCvModuleTest : public test::ScratchTest {
 protected:
  void SetUp() override {
    ScratchTest::SetUp();
    if (module_loaded()) GTEST_SKIP() << "the module is already loaded in this process; run this test alone";
  }
};

TEST_F(OpenCvModuleTest, LoadedOnlyForTheFormatsThatNeedIt) {
  const std::string png = path("a.png");
  const std::string bmp = path("a.bmp");
  EXPECT_EQ(in_child([&] {
              if (module_loaded()) return 1;
              write_image(png, pattern(8, 8, 3));
              write_image(path("a.jpg"), pattern(8, 8, 3));
              (void)read_image(png);
              (void)read_image(path("a.jpg"));
              (void)read_image_info(path("a.jpg"));
              if (module_loaded()) return 2;
              write_image(bmp, pattern(8, 8, 3));
              return module_loaded() ? 0 : 3;
            }),
            0);
}

TEST_F(OpenCvModuleTest, MissingModuleIsAOneLineErrorForItsFormatsOnly) {
  const Image image = pattern(8, 8, 3);
  {
    std::ofstream ppm(path("b.ppm"), std::ios::binary);
    ppm << "P6\n8 8\n255\n";
    ppm.write(reinterpret_cast<const char*>(image.data8.data()), static_cast<std::streamsize>(image.data8.size()));
  }
  EXPECT_EQ(in_child([&] {
              ::setenv("RSZ_OPENCV_MODULE", "/nonexistent/librsz_opencv_codecs.so", 1);
              write_image(path("ok.png"), image);
              write_image(path("ok.jpg"), image);
              for (const auto& f : {std::function<void()>([&] { (void)read_image(path("b.ppm")); }),
                                    std::function<void()>([&] { write_image(path("c.webp"), image); })}) {
                try {
                  f();
                  return 1;
                } catch (const Error& e) {
                  const std::string m = e.what();
                  if (e.code() != ErrorCode::Io || m.find('\n') != std::string::npos ||
                      m.find("librsz_opencv_codecs.so") == std::string::npos ||
                      m.find("/nonexistent/") == std::string::npos || m.find("PNG and JPEG") == std::string::npos) {
                    return 2;
                  }
                }
              }
              return 0;
            }),
            0);
  EXPECT_FALSE(std::filesystem::exists(path("c.webp")));
}


// with_jpeg_metadata (--encode gpu: nvJPEG's files get the metadata rsz's CPU encoder writes): splicing an image's
// EXIF, XMP and ICC profile into the file encoded without them gives the bytes of the file encoded with them, for
// RGB and gray, a profile of many APP2 chunks, a profile of the wrong colour space and EXIF too large for a segment
// (both left out, as the encoder leaves them out); a file without a JFIF header gets them after its start, and reads
// back with them; bytes that are not a JPEG are refused.
class JpegMetadata : public test::ScratchTest {};

TEST_F(JpegMetadata, SplicedIntoAnEncodedFileAsTheEncoderWritesThem) {
  std::string big_profile = srgb_profile();
  big_profile.resize(150000, 'x');  // three chunks; its header still says RGB
  const std::string exif("MM\0*\0\0\0\x08\0\0", 10);
  for (const int channels : {3, 1}) {
    const std::string& profile = channels == 3 ? srgb_profile() : srgb_gray_profile();
    struct Case {
      std::string exif, xmp, icc;
    };
    for (const Case& c : {Case{exif, "<x:xmpmeta>rsz</x:xmpmeta>", profile}, Case{"", "", big_profile},
                          Case{std::string(70000, 'e'), "", channels == 3 ? srgb_gray_profile() : srgb_profile()},
                          Case{exif, "", ""}}) {
      Image plain = pattern(83, 61, channels);
      Image with = plain;
      with.exif = c.exif;
      with.xmp = c.xmp;
      with.icc_profile = c.icc;
      const std::vector<std::uint8_t> encoded = encode_image("x.jpg", plain);
      const std::vector<std::uint8_t> spliced = with_jpeg_metadata(
          std::string_view(reinterpret_cast<const char*>(encoded.data()), encoded.size()), with, channels);
      EXPECT_EQ(spliced, encode_image("x.jpg", with)) << channels << " channels, profile " << c.icc.size();
    }
    // Without a JFIF header (nvJPEG may write none): after SOI, read back as written.
    const std::vector<std::uint8_t> encoded = encode_image("x.jpg", pattern(40, 30, channels));
    ASSERT_GE(encoded.size(), 20u);
    ASSERT_EQ(encoded[3], 0xE0);
    const std::size_t app0 = 2 + 2 + (std::size_t{encoded[4]} << 8 | encoded[5]);
    std::string bare("\xFF\xD8", 2);
    bare.append(reinterpret_cast<const char*>(encoded.data()) + app0, encoded.size() - app0);
    Image metadata;
    metadata.exif = exif;
    metadata.icc_profile = profile;
    const std::vector<std::uint8_t> spliced = with_jpeg_metadata(bare, metadata, channels);
    write_encoded_image(path("bare.jpg"), spliced);
    write_encoded_image(path("plain.jpg"), encoded);
    const Image back = read_image(path("bare.jpg"));
    EXPECT_EQ(back.exif, exif);
    EXPECT_EQ(back.icc_profile, profile);
    EXPECT_EQ(back.data8, read_image(path("plain.jpg")).data8);
  }
  EXPECT_THROW(with_jpeg_metadata("not a JPEG", Image{}, 3), Error);
}

}  // namespace
}  // namespace rsz::io
