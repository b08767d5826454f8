// The GPU JPEG decoder (rsz/io/gpu_jpeg.h) against libjpeg-turbo's pixels (rsz::io::read_image) over the sample
// photos and the JPEG kinds of tests/data (4:4:4, 4:2:2, 4:2:0, gray, progressive): the same sizes and channels, and
// the difference measured and printed (nvJPEG's IDCT and chroma upsampling are not libjpeg's). A batch mixing files
// nvJPEG cannot decode (damaged, CMYK) decodes the others and says why for those. Skips where no GPU can be used.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "rsz/error.h"
#include "rsz/io/gpu_jpeg.h"
#include "rsz/io/image.h"
#include "support/test_util.h"

namespace {

std::string source(const std::string& relative) { return std::string(RSZ_SOURCE_DIR) + "/" + relative; }

// A decoder on device 0, or the reason none can be made (the test skips).
std::unique_ptr<rsz::io::gpu::JpegBatchDecoder> decoder_or(std::string& why, int batch = 16) {
  try {
    return std::make_unique<rsz::io::gpu::JpegBatchDecoder>(0, batch);
  } catch (const std::exception& e) {
    why = e.what();
    return nullptr;
  }
}

#define RSZ_NEED_DECODER(decoder)                                                            \
  std::string why;                                                                           \
  auto decoder = decoder_or(why);                                                            \
  if (!decoder) GTEST_SKIP() << "GPU JPEG tests skipped: " << why

std::vector<std::uint8_t> to_host(const rsz::io::gpu::DeviceImage& image) {
  std::vector<std::uint8_t> host(static_cast<std::size_t>(image.width * image.height * 3));
  EXPECT_EQ(cudaMemcpy2D(host.data(), image.width * 3, image.data, image.row_bytes, image.width * 3, image.height,
                         cudaMemcpyDeviceToHost),
            cudaSuccess);
  return host;
}

struct Difference {
  int max = 0;
  double mean = 0;
};

// The GPU's pixels against libjpeg-turbo's of the same file (no EXIF orientation: the decoder applies none).
Difference compare(const rsz::io::gpu::DeviceImage& gpu, const std::string& file, const std::string& name) {
  const std::string path = testing::TempDir() + "/rsz_gpu_jpeg_" + std::to_string(::getpid()) + ".jpg";
  rsz::test::write_file(path, file);
  rsz::io::ImageReadOptions options;
  options.apply_exif_orientation = false;
  const rsz::io::Image cpu = rsz::io::read_image(path, options);
  std::remove(path.c_str());
  EXPECT_EQ(gpu.width, cpu.width) << name;
  EXPECT_EQ(gpu.height, cpu.height) << name;
  EXPECT_EQ(gpu.channels, cpu.channels) << name;
  Difference d;
  if (gpu.width != cpu.width || gpu.height != cpu.height || gpu.channels != cpu.channels) return d;
  const std::vector<std::uint8_t> host = to_host(gpu);
  double sum = 0;
  const std::int64_t pixels = cpu.width * cpu.height;
  for (std::int64_t p = 0; p < pixels; ++p) {
    for (int c = 0; c < cpu.channels; ++c) {
      const int diff = std::abs(int{host[static_cast<std::size_t>(p * 3 + c)]} -
                                int{cpu.data8[static_cast<std::size_t>(p * cpu.channels + c)]});
      d.max = std::max(d.max, diff);
      sum += diff;
    }
    if (cpu.channels == 1) {  // a gray file: R = G = B
      EXPECT_EQ(host[static_cast<std::size_t>(p * 3)], host[static_cast<std::size_t>(p * 3 + 1)]) << name;
      EXPECT_EQ(host[static_cast<std::size_t>(p * 3)], host[static_cast<std::size_t>(p * 3 + 2)]) << name;
    }
  }
  d.mean = sum / static_cast<double>(pixels * cpu.channels);
  return d;
}

struct JpegFile {
  std::string name;
  std::string bytes;
  bool photo;  // a photograph (else tests/data's noise, whose every chroma sample differs from its neighbours)
  bool exact;  // no chroma upsampling (4:4:4, gray): nvJPEG's pixels are libjpeg-turbo's
};

// The sample photos as JPEG files (quality 90, 4:2:0, as rsz writes them), rocket.jpg (4:4:4) and the JPEG kinds of
// tests/data (61 x 47 noise).
std::vector<JpegFile> jpeg_files() {
  std::vector<JpegFile> files;
  for (const char* name : {"camera.png", "chelsea.png", "coffee.png"}) {
    const rsz::io::Image image = rsz::io::read_image(source(std::string("samples/photos/") + name));
    rsz::io::ImageWriteOptions options;
    options.quality = 90;
    const std::vector<std::uint8_t> bytes = rsz::io::encode_image("x.jpg", image, options);
    files.push_back({std::string(name) + " as JPEG", std::string(bytes.begin(), bytes.end()), true, image.channels == 1});
  }
  files.push_back({"rocket.jpg", rsz::test::read_file(source("samples/photos/rocket.jpg")), true, true});
  for (const char* name : {"jpeg_444.jpg", "jpeg_422.jpg", "jpeg_420.jpg", "jpeg_gray.jpg", "jpeg_progressive.jpg"}) {
    const std::string kind(name);
    files.push_back({kind, rsz::test::read_file(source("tests/data/images/" + kind)), false,
                     kind == "jpeg_444.jpg" || kind == "jpeg_gray.jpg"});
  }
  return files;
}

// Measured on an H200 (engines and CUDA decoder alike): the photos within 32 levels, 0.8 on average; files without
// chroma upsampling exact; noise, whose chroma nvJPEG upsamples otherwise than libjpeg's "fancy" filter, about 15 on
// average. docs/CUDA.md states these.
TEST(GpuJpeg, PixelsAreCloseToLibjpegTurbosOverTheSamplePhotos) {
  RSZ_NEED_DECODER(decoder);
  const std::vector<JpegFile> files = jpeg_files();
  std::vector<std::string_view> views;
  for (const JpegFile& f : files) views.emplace_back(f.bytes);
  const std::vector<rsz::io::gpu::DeviceImage> images = decoder->decode(views);
  ASSERT_EQ(images.size(), files.size());
  int worst = 0;
  for (std::size_t i = 0; i < files.size(); ++i) {
    const JpegFile& f = files[i];
    ASSERT_TRUE(images[i].error.empty()) << f.name << ": " << images[i].error;
    const Difference d = compare(images[i], f.bytes, f.name);
    std::printf("gpu-jpeg %-24s %s  %lldx%lld  max %d  mean %.3f\n", f.name.c_str(),
                images[i].engine ? "engine" : "cuda  ", static_cast<long long>(images[i].width),
                static_cast<long long>(images[i].height), d.max, d.mean);
    if (f.exact) {
      EXPECT_EQ(d.max, 0) << f.name;
    } else if (f.photo) {
      EXPECT_LE(d.max, 40) << f.name;
      EXPECT_LT(d.mean, 1.0) << f.name;
    } else {
      EXPECT_LT(d.mean, 20.0) << f.name;  // a wrong decode of noise is about 80 off on average
    }
    if (f.photo) worst = std::max(worst, d.max);
  }
  std::printf("gpu-jpeg engine: %s; photos' largest difference %d levels\n", decoder->engine(), worst);
}

TEST(GpuJpeg, FilesItCannotDecodeSayWhyAndTheOthersDecode) {
  RSZ_NEED_DECODER(decoder);
  const std::string good = rsz::test::read_file(source("samples/photos/rocket.jpg"));
  const std::string cmyk = rsz::test::read_file(source("tests/data/images/jpeg_cmyk.jpg"));
  const std::string garbage = "\xff\xd8\xff\xe0 not a JPEG body";
  const std::string progressive = rsz::test::read_file(source("tests/data/images/jpeg_progressive.jpg"));
  const std::vector<rsz::io::gpu::DeviceImage> images = decoder->decode({good, garbage, cmyk, progressive, good});
  ASSERT_EQ(images.size(), 5u);
  for (const std::size_t i : {0u, 3u, 4u}) {
    EXPECT_TRUE(images[i].error.empty()) << i << ": " << images[i].error;
    EXPECT_NE(images[i].data, nullptr);
  }
  EXPECT_FALSE(images[1].error.empty());
  EXPECT_EQ(images[1].data, nullptr);
  EXPECT_NE(images[2].error.find("CMYK"), std::string::npos) << images[2].error;
  EXPECT_EQ(to_host(images[0]), to_host(images[4]));  // the same file, the same pixels
  const std::vector<std::string_view> too_many(17, good);
  EXPECT_THROW(decoder->decode(too_many), rsz::Error);
}

// Decoders that share nvJPEG's handles (sibling()), each on its own thread at once, decode as one decoder alone does.
TEST(GpuJpeg, SiblingsOnTheirOwnThreadsDecodeAsOneDecoderDoes) {
  RSZ_NEED_DECODER(decoder);
  const std::vector<JpegFile> files = jpeg_files();
  std::vector<std::string_view> views;
  for (const JpegFile& f : files) views.emplace_back(f.bytes);
  std::vector<std::vector<std::uint8_t>> alone;
  for (const rsz::io::gpu::DeviceImage& image : decoder->decode(views)) alone.push_back(to_host(image));
  std::unique_ptr<rsz::io::gpu::JpegBatchDecoder> sibling = decoder->sibling();
  EXPECT_STREQ(sibling->engine(), decoder->engine());
  std::vector<std::vector<std::uint8_t>> first;
  std::vector<std::vector<std::uint8_t>> second;
  const auto decode_with = [&](rsz::io::gpu::JpegBatchDecoder& d, std::vector<std::vector<std::uint8_t>>& out) {
    for (int round = 0; round < 8; ++round) {
      out.clear();
      for (const rsz::io::gpu::DeviceImage& image : d.decode(views)) out.push_back(to_host(image));
    }
  };
  std::thread other([&] { decode_with(*sibling, second); });
  decode_with(*decoder, first);
  other.join();
  ASSERT_EQ(first.size(), files.size());
  ASSERT_EQ(second.size(), files.size());
  for (std::size_t i = 0; i < files.size(); ++i) {
    EXPECT_EQ(first[i], alone[i]) << files[i].name;
    EXPECT_EQ(second[i], alone[i]) << files[i].name;
  }
  decoder.reset();  // the sibling keeps the shared handles
  const std::vector<rsz::io::gpu::DeviceImage> again = sibling->decode(views);
  ASSERT_EQ(again.size(), files.size());
  EXPECT_EQ(to_host(again.back()), alone.back());
}

}  // namespace
