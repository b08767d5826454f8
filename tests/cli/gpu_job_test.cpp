// --decode gpu (rsz resample / thumbnail): JPEGs decoded by nvJPEG in batches and resized on the GPU. Where the build
// or the machine cannot (no nvJPEG, no GPU: CI), the refusal is checked (one line, nothing written) and the rest
// skips. Where it runs: files nvJPEG decodes exactly (4:4:4, gray) give the CPU job's bytes, since the resize is the
// CPU backend's bits; 4:2:0 photos are within nvJPEG's decoding difference; files it does not take (PNG, EXIF
// orientation, CMYK, damaged) are the CPU job's, the damaged one failing with the CPU decoder's message.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "cli/cli_support.h"
#include "rsz/io/image.h"
#include "support/test_util.h"

namespace fs = std::filesystem;
using rsz::test::photo;
using rsz::test::run_rsz;
using rsz::test::ScratchDir;

namespace {

bool gpu_decode_refused(const rsz::test::CommandResult& r) {
  return r.status == 2 && (r.err.find("no GPU JPEG decoder") != std::string::npos ||
                           r.err.find("the GPU cannot be used") != std::string::npos);
}

}  // namespace

TEST(GpuJobs, DecodeGpuMatchesTheCpuJobWhereTheDecodeIsExact) {
  ScratchDir dir("gpu-decode");
  fs::create_directories(dir.path() / "in");
  fs::copy_file(photo("rocket.jpg"), dir / "in/rocket.jpg");  // 4:4:4: nvJPEG's pixels are libjpeg-turbo's
  fs::copy_file(photo("camera.png"), dir / "in/camera.png");  // not a JPEG: decoded on the CPU
  fs::copy_file(std::string(RSZ_SOURCE_DIR) + "/tests/data/images/jpeg_gray.jpg", dir / "in/gray.jpg");
  fs::copy_file(std::string(RSZ_SOURCE_DIR) + "/tests/data/images/jpeg_cmyk.jpg", dir / "in/cmyk.jpg");
  rsz::test::write_file(dir / "in/sideways.jpg",
                        rsz::test::with_exif_orientation(rsz::test::read_file(photo("rocket.jpg")), 6));
  ASSERT_EQ(run_rsz(dir, "resample -i " + photo("chelsea.png") + " -o in/chelsea.jpg --scale 1 -q").status, 0);
  rsz::test::write_file(dir / "in/damaged.jpg", "\xff\xd8\xff\xe0 not a JPEG body");
  auto gpu = run_rsz(dir, "thumbnail -i in -o gpu/ --size 96 --decode gpu --json -q");
  if (gpu_decode_refused(gpu)) {
    EXPECT_EQ(std::count(gpu.err.begin(), gpu.err.end(), '\n'), 1) << gpu.err;
    EXPECT_EQ(gpu.err.rfind("rsz: --decode: ", 0), 0u) << gpu.err;
    EXPECT_FALSE(fs::exists(dir.path() / "gpu"));
    GTEST_SKIP() << "--decode gpu cannot run here: " << gpu.err;
  }
  auto cpu = run_rsz(dir, "thumbnail -i in -o cpu/ --size 96 --json -q");
  EXPECT_EQ(gpu.status, 1) << gpu.err;  // damaged.jpg
  EXPECT_EQ(cpu.status, 1) << cpu.err;
  EXPECT_EQ(gpu.err, cpu.err);  // the damaged file's line is the CPU decoder's
  for (const char* name : {"rocket.jpg", "camera.png", "gray.jpg", "cmyk.jpg", "sideways.jpg"}) {
    EXPECT_EQ(rsz::test::read_file(dir / (std::string("gpu/") + name)),
              rsz::test::read_file(dir / (std::string("cpu/") + name)))
        << name;
  }
  // 4:2:0: nvJPEG upsamples chroma otherwise; the thumbnails stay within its decoding difference.
  const rsz::io::Image a = rsz::io::read_image(dir / "gpu/chelsea.jpg");
  const rsz::io::Image b = rsz::io::read_image(dir / "cpu/chelsea.jpg");
  ASSERT_EQ(a.data8.size(), b.data8.size());
  int largest = 0;
  double sum = 0;
  for (std::size_t i = 0; i < a.data8.size(); ++i) {
    const int d = std::abs(int{a.data8[i]} - int{b.data8[i]});
    largest = std::max(largest, d);
    sum += d;
  }
  EXPECT_LE(largest, 40);
  EXPECT_LT(sum / static_cast<double>(a.data8.size()), 2.0);
  // The operators stay on the GPU: --backend cpu is refused with it.
  auto refused = run_rsz(dir, "thumbnail -i in/rocket.jpg -o no/ --size 96 --decode gpu --backend cpu");
  EXPECT_EQ(refused.status, 2);
  EXPECT_NE(refused.err.find("--backend cuda or auto is allowed"), std::string::npos) << refused.err;
  EXPECT_FALSE(fs::exists(dir.path() / "no"));
}
