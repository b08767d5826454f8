// The GPU JPEG decoder (rsz/io/gpu_jpeg.h) against libjpeg-turbo's pixels (rsz::io::read_image) over the sample
// photos and the JPEG kinds of tests/data (4:4:4, 4:2:2, 4:2:0, gray, progressive): the same sizes and channels, and
// the difference measured and printed (nvJPEG's IDCT and chroma upsampling are not libjpeg's). A batch mixing files
// nvJPEG cannot decode (damaged, CMYK) decodes the others and says why for those. Skips where no GPU can be used.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
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

// quantize8 (the GPU stage's 8-bit results) against tensor_to_image, the CPU's quantization, over the values where
// rounding turns: every k / 255 and (k + 0.5) / 255 and the floats next to them, special values (NaN, infinities,
// signed zeros, subnormals, past 1), and random ones; 1 and 3 channels, packed and strided (a window of a larger
// canvas), several images at once.
TEST(GpuJpeg, Quantize8HasTheCpusBits) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) GTEST_SKIP() << "no CUDA device";
  std::vector<float> values = {std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::quiet_NaN(),
                               std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                               0.0f, -0.0f, std::numeric_limits<float>::denorm_min(), -1e-30f, 1e-30f, 1.0f,
                               std::nextafter(1.0f, 2.0f), std::nextafter(1.0f, 0.0f), 2.0f, 1e30f, -2.0f};
  for (int k = 0; k <= 255; ++k) {
    for (const double at : {k / 255.0, (k + 0.5) / 255.0}) {
      float v = static_cast<float>(at);
      for (int step = 0; step < 3; ++step) v = std::nextafter(v, -1.0f);
      for (int step = 0; step < 7; ++step, v = std::nextafter(v, 2.0f)) values.push_back(v);
    }
  }
  std::uint32_t seed = 12345;
  while (values.size() % 96 != 0 || values.size() < 8000) {
    seed = seed * 1664525u + 1013904223u;
    values.push_back(-0.1f + 1.2f * static_cast<float>(seed >> 8) / static_cast<float>(1u << 24));
  }
  for (const int channels : {1, 3}) {
    for (const bool strided : {false, true}) {
      const std::int64_t n = 2;
      const std::int64_t w = 48;
      const std::int64_t h = static_cast<std::int64_t>(values.size()) / (n * channels * w) + 1;
      // The canvas: packed, or the view a window of a canvas 5 columns wider and 3 rows taller.
      const std::int64_t cw = strided ? w + 5 : w;
      const std::int64_t ch = strided ? h + 3 : h;
      std::vector<float> canvas(static_cast<std::size_t>(n * channels * ch * cw));
      for (std::size_t i = 0; i < canvas.size(); ++i) canvas[i] = values[i % values.size()];
      const rsz::Dims sizes{n, channels, h, w};
      const rsz::Dims strides{channels * ch * cw, ch * cw, cw, 1};
      const std::int64_t origin = strided ? 2 * cw + 3 : 0;
      float* device = nullptr;
      std::uint8_t* out = nullptr;
      const std::size_t out_bytes = static_cast<std::size_t>(n * channels * h * w);
      ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&device), canvas.size() * sizeof(float)), cudaSuccess);
      ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&out), out_bytes), cudaSuccess);
      ASSERT_EQ(cudaMemcpy(device, canvas.data(), canvas.size() * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
      rsz::io::gpu::quantize8(rsz::ConstTensorView(device + origin, rsz::DataType::Float32, sizes, strides,
                                                   rsz::MemorySpace::Device),
                              out, nullptr);
      std::vector<std::uint8_t> gpu(out_bytes);
      ASSERT_EQ(cudaMemcpy(gpu.data(), out, out_bytes, cudaMemcpyDeviceToHost), cudaSuccess);
      cudaFree(device);
      cudaFree(out);
      for (std::int64_t image = 0; image < n; ++image) {
        const rsz::ConstTensorView one(canvas.data() + origin + image * strides[0], rsz::DataType::Float32,
                                       {1, channels, h, w}, strides);
        const rsz::io::Image cpu = rsz::io::tensor_to_image(one, 8, rsz::io::AlphaMode::Straight);
        const std::size_t each = static_cast<std::size_t>(channels * h * w);
        ASSERT_EQ(cpu.data8.size(), each);
        std::size_t differ = 0;
        for (std::size_t i = 0; i < each; ++i) differ += cpu.data8[i] != gpu[image * each + i] ? 1 : 0;
        EXPECT_EQ(differ, 0u) << channels << " channels, strided " << strided << ", image " << image;
      }
    }
  }
  // What it refuses: another type, host memory.
  EXPECT_THROW(rsz::io::gpu::quantize8(rsz::ConstTensorView(nullptr, rsz::DataType::Float16, {1, 3, 2, 2}, {},
                                                            rsz::MemorySpace::Device),
                                       nullptr, nullptr),
               rsz::Error);
  EXPECT_THROW(rsz::io::gpu::quantize8(rsz::ConstTensorView(nullptr, rsz::DataType::Float32, {1, 3, 2, 2}), nullptr,
                                       nullptr),
               rsz::Error);
}
