// --decode gpu (rsz resample / thumbnail / roi-align): JPEGs decoded by nvJPEG in batches and resized or cropped on
// the GPU. Where the build or the machine cannot (no nvJPEG, no GPU: CI), the refusal is checked (one line, nothing
// written) and the rest skips. Where it runs: files nvJPEG decodes exactly (4:4:4, gray) give the CPU job's bytes,
// since the resize is the CPU backend's bits; 4:2:0 photos are within nvJPEG's decoding difference; files it does
// not take (PNG, EXIF orientation, CMYK, damaged) are the CPU job's, the damaged one failing with the CPU decoder's
// message.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "cli/cli_support.h"
#include "rsz/io/colour.h"
#include "rsz/io/image.h"
#include "support/test_util.h"

namespace fs = std::filesystem;
using rsz::test::photo;
using rsz::test::run_rsz;
using rsz::test::run_shell;
using rsz::test::ScratchDir;

namespace {

// The largest and the mean difference between two 8-bit images' samples (same sizes asserted).
std::pair<int, double> sample_difference(const rsz::io::Image& a, const rsz::io::Image& b) {
  EXPECT_EQ(a.width, b.width);
  EXPECT_EQ(a.height, b.height);
  EXPECT_EQ(a.channels, b.channels);
  if (a.data8.size() != b.data8.size() || a.data8.empty()) return {256, 256.0};
  int largest = 0;
  double sum = 0;
  for (std::size_t i = 0; i < a.data8.size(); ++i) {
    const int d = std::abs(int{a.data8[i]} - int{b.data8[i]});
    largest = std::max(largest, d);
    sum += d;
  }
  return {largest, sum / static_cast<double>(a.data8.size())};
}

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
  const auto [largest, mean] = sample_difference(rsz::io::read_image(dir / "gpu/chelsea.jpg"),
                                                 rsz::io::read_image(dir / "cpu/chelsea.jpg"));
  EXPECT_LE(largest, 40);
  EXPECT_LT(mean, 2.0);
  // The operators stay on the GPU: --backend cpu is refused with it.
  auto refused = run_rsz(dir, "thumbnail -i in/rocket.jpg -o no/ --size 96 --decode gpu --backend cpu");
  EXPECT_EQ(refused.status, 2);
  EXPECT_NE(refused.err.find("--backend cuda or auto is allowed"), std::string::npos) << refused.err;
  EXPECT_FALSE(fs::exists(dir.path() / "no"));
}

// roi-align --decode gpu: a JPEG decoded on the GPU is cropped there; a 4:4:4 file's crops (nvJPEG's pixels are
// libjpeg-turbo's) are the CPU job's bytes, with the same manifest, in crop files and in one .npy; a PNG is cropped on
// the CPU; a bad box fails the input with the CPU job's message before anything is written.
TEST(GpuJobs, RoiAlignDecodeGpuCropsAsTheCpuJob) {
  ScratchDir dir("gpu-roi");
  fs::create_directories(dir.path() / "in");
  fs::copy_file(photo("rocket.jpg"), dir / "in/rocket.jpg");
  fs::copy_file(photo("camera.png"), dir / "in/camera.png");
  rsz::test::write_file(dir / "rois.json",
                        R"({"rois": [[10, 20, 200, 180], [-15, 5, 60, 90.5], [100, 100, 100.5, 140]]})");
  const auto crops = [&](const std::string& to, const std::string& more) {
    return run_rsz(dir, "roi-align -i in --rois rois.json --output-size 32x24 -o '" + to + "/{stem}_{index}.png' " +
                            "--manifest " + to + ".jsonl -q" + more);
  };
  auto gpu = crops("gpu", " --decode gpu");
  if (gpu_decode_refused(gpu)) {
    EXPECT_EQ(std::count(gpu.err.begin(), gpu.err.end(), '\n'), 1) << gpu.err;
    EXPECT_FALSE(fs::exists(dir.path() / "gpu"));
    EXPECT_FALSE(fs::exists(dir.path() / "gpu.jsonl"));
    GTEST_SKIP() << "--decode gpu cannot run here: " << gpu.err;
  }
  auto cpu = crops("cpu", "");
  ASSERT_EQ(gpu.status, 0) << gpu.err;
  ASSERT_EQ(cpu.status, 0) << cpu.err;
  EXPECT_EQ(gpu.err, cpu.err);
  for (const char* stem : {"rocket", "camera"}) {
    for (int index = 0; index < 3; ++index) {
      const std::string name = std::string(stem) + "_" + std::to_string(index) + ".png";
      EXPECT_EQ(rsz::test::read_file(dir / ("gpu/" + name)), rsz::test::read_file(dir / ("cpu/" + name))) << name;
    }
  }
  std::string manifest = rsz::test::read_file(dir / "gpu.jsonl");
  for (std::size_t at = manifest.find("gpu/"); at != std::string::npos; at = manifest.find("gpu/", at)) {
    manifest.replace(at, 4, "cpu/");
  }
  EXPECT_EQ(manifest, rsz::test::read_file(dir / "cpu.jsonl"));
  // Every crop of an input in one tensor.
  ASSERT_EQ(run_rsz(dir, "roi-align -i in/rocket.jpg --rois rois.json --output-size 8x8 -o gpu.npy -q --decode gpu")
                .status,
            0);
  ASSERT_EQ(run_rsz(dir, "roi-align -i in/rocket.jpg --rois rois.json --output-size 8x8 -o cpu.npy -q").status, 0);
  EXPECT_EQ(rsz::test::read_file(dir / "gpu.npy"), rsz::test::read_file(dir / "cpu.npy"));
  // A batch index past the batch: the input fails before any crop is written, with the CPU job's line.
  rsz::test::write_file(dir / "bad.json", R"({"rois": [[10, 20, 200, 180], [5, 5, 40, 9]], "batch_indices": [0, 1]})");
  const auto bad = [&](const std::string& to, const std::string& more) {
    return run_rsz(dir, "roi-align -i in/rocket.jpg --rois bad.json --output-size 8x8 -o '" + to +
                            "/{index}.png' -q" + more);
  };
  auto bad_gpu = bad("bad_gpu", " --decode gpu");
  auto bad_cpu = bad("bad_cpu", "");
  EXPECT_EQ(bad_cpu.status, 1) << bad_cpu.err;
  EXPECT_EQ(bad_gpu.status, bad_cpu.status);
  EXPECT_EQ(bad_gpu.err, bad_cpu.err);
  EXPECT_FALSE(fs::exists(dir.path() / "bad_gpu/0.png"));
  // The crops stay on the GPU: --backend cpu is refused with it.
  auto refused = crops("no", " --decode gpu --backend cpu");
  EXPECT_EQ(refused.status, 2);
  EXPECT_NE(refused.err.find("--decode gpu crops on the GPU: --backend cuda or auto is allowed"), std::string::npos)
      << refused.err;
  EXPECT_FALSE(fs::exists(dir.path() / "no"));
}


// --encode gpu: the JPEG thumbnails and crops the GPU made are encoded there (nvJPEG). Refused in one line where it
// cannot run, and without --decode gpu. Where it runs: the files decode within a few levels of the CPU job's (the same
// decoded pixels: a 4:4:4 input), carry the same EXIF and ICC profile, keep names and manifest; PNG outputs and
// sRGB-converted ones are the CPU job's bytes.
TEST(GpuJobs, EncodeGpuWritesJpegsCloseToTheCpuJobsWithTheirMetadata) {
  ScratchDir dir("gpu-encode");
  fs::create_directories(dir.path() / "in");
  fs::copy_file(photo("rocket.jpg"), dir / "in/rocket.jpg");  // 4:4:4: nvJPEG's pixels are libjpeg-turbo's
  {
    rsz::io::Image tagged = rsz::io::read_image(photo("rocket.jpg"));
    tagged.exif = std::string("MM\0*\0\0\0\x08\0\0", 10);
    tagged.icc_profile = rsz::io::srgb_profile();
    rsz::io::write_image((dir.path() / "in/tagged.jpg").string(), tagged, 95);
  }
  auto without = run_rsz(dir, "thumbnail -i in -o nodecode/ --size 96 --encode gpu");
  EXPECT_EQ(without.status, 2) << without.err;
  EXPECT_EQ(std::count(without.err.begin(), without.err.end(), '\n'), 1) << without.err;
  EXPECT_TRUE(without.err.find("--decode gpu is needed") != std::string::npos ||
              without.err.find("no GPU JPEG encoder") != std::string::npos ||
              without.err.find("the GPU cannot be used") != std::string::npos)
      << without.err;
  EXPECT_FALSE(fs::exists(dir.path() / "nodecode"));
  auto gpu = run_rsz(dir, "thumbnail -i in -o gpu/ --size 96 --decode gpu --encode gpu --quality 90 -q");
  if (gpu_decode_refused(gpu)) GTEST_SKIP() << "--decode gpu cannot run here: " << gpu.err;
  ASSERT_EQ(gpu.status, 0) << gpu.err;
  ASSERT_EQ(run_rsz(dir, "thumbnail -i in -o cpu/ --size 96 --quality 90 -q").status, 0);
  for (const char* name : {"rocket.jpg", "tagged.jpg"}) {
    const std::string gpu_file = (dir.path() / "gpu" / name).string();
    const std::string cpu_file = (dir.path() / "cpu" / name).string();
    EXPECT_NE(rsz::test::read_file(gpu_file), rsz::test::read_file(cpu_file)) << name << ": not nvJPEG's file";
    const rsz::io::Image a = rsz::io::read_image(gpu_file);
    const rsz::io::Image b = rsz::io::read_image(cpu_file);
    const auto [largest, mean] = sample_difference(a, b);
    std::printf("--encode gpu against the CPU's JPEG, %s at quality 90: largest difference %d, mean %.3f\n", name,
                largest, mean);
    EXPECT_LE(largest, 24) << name;
    EXPECT_LT(mean, 1.5) << name;
    EXPECT_EQ(a.exif, b.exif) << name;
    EXPECT_EQ(a.icc_profile, b.icc_profile) << name;
  }
  EXPECT_FALSE(rsz::io::read_image((dir.path() / "gpu/tagged.jpg").string()).exif.empty());
  // A PNG output is encoded on the CPU: the CPU job's bytes.
  ASSERT_EQ(run_rsz(dir, "thumbnail -i in/rocket.jpg -o gpu.png --size 96 --decode gpu --encode gpu -q").status, 0);
  ASSERT_EQ(run_rsz(dir, "thumbnail -i in/rocket.jpg -o cpu.png --size 96 -q").status, 0);
  EXPECT_EQ(rsz::test::read_file(dir / "gpu.png"), rsz::test::read_file(dir / "cpu.png"));
  // Crops: one JPEG file a box, the CPU job's names and manifest, pixels within the same bounds.
  rsz::test::write_file(dir / "rois.json", R"({"rois": [[10, 20, 200, 180], [-15, 5, 60, 90.5], [100, 100, 140, 160]]})");
  const auto crops = [&](const std::string& to, const std::string& more) {
    return run_rsz(dir, "roi-align -i in/rocket.jpg --rois rois.json --output-size 48x40 -o '" + to +
                            "/{index}.jpg' --manifest " + to + ".jsonl -q" + more);
  };
  ASSERT_EQ(crops("gpu_crops", " --decode gpu --encode gpu").status, 0);
  ASSERT_EQ(crops("cpu_crops", "").status, 0);
  for (int index = 0; index < 3; ++index) {
    const std::string name = std::to_string(index) + ".jpg";
    const auto [largest, mean] = sample_difference(rsz::io::read_image((dir.path() / "gpu_crops" / name).string()),
                                                   rsz::io::read_image((dir.path() / "cpu_crops" / name).string()));
    std::printf("--encode gpu against the CPU's JPEG, crop %d: largest difference %d, mean %.3f\n", index, largest,
                mean);
    EXPECT_LE(largest, 24) << name;
    EXPECT_LT(mean, 1.5) << name;
  }
  std::string manifest = rsz::test::read_file(dir / "gpu_crops.jsonl");
  for (std::size_t at = manifest.find("gpu_crops/"); at != std::string::npos; at = manifest.find("gpu_crops/", at)) {
    manifest.replace(at, 10, "cpu_crops/");
  }
  EXPECT_EQ(manifest, rsz::test::read_file(dir / "cpu_crops.jsonl"));
}

// --device: N, a list of distinct GPUs or all. A malformed or repeated list is a one-line usage error everywhere;
// naming a GPU the machine does not have is one too, before anything is written. Where two GPUs run: the GPU stage
// has a lane on each (the first GPU's from the start), and the outputs are the one-GPU job's bytes; --backend cuda's
// inputs take the GPUs in turn with the CPU job's bytes.
TEST(GpuJobs, SeveralGpusShareTheJobWithTheSameOutputs) {
  ScratchDir dir("gpu-devices");
  fs::create_directories(dir.path() / "in");
  for (int i = 0; i < 150; ++i) {  // more than two batches of 64, so that both lanes take some
    fs::copy_file(photo("rocket.jpg"), dir / ("in/r" + std::to_string(i) + ".jpg"));
  }
  for (const char* bad : {"0,0", "1x", "", "-1", "0,,1", "1024", "al"}) {
    auto r = run_rsz(dir, std::string("thumbnail -i in -o bad/ --size 32 --device '") + bad + "'");
    EXPECT_EQ(r.status, 2) << bad << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find("--device"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir.path() / "bad"));
  }
  auto twice = run_rsz(dir, "thumbnail -i in -o bad/ --size 32 --device 1,0,1");
  EXPECT_NE(twice.err.find("GPU 1 is named twice"), std::string::npos) << twice.err;
  // Without a GPU in the job, the list is not looked at: the CPU job runs.
  ASSERT_EQ(run_rsz(dir, "thumbnail -i in/r0.jpg -o cpu0.png --size 32 --device 0,7 -q").status, 0);
  ASSERT_EQ(run_rsz(dir, "thumbnail -i in/r0.jpg -o all.png --size 32 --device all -q").status, 0);
  EXPECT_EQ(rsz::test::read_file(dir / "cpu0.png"), rsz::test::read_file(dir / "all.png"));

  auto one = run_rsz(dir, "thumbnail -i in -o one/ --size 64 --decode gpu --device 0 -q");
  if (gpu_decode_refused(one)) GTEST_SKIP() << "--decode gpu cannot run here: " << one.err;
  ASSERT_EQ(one.status, 0) << one.err;
  // A GPU past the machine's: one line naming it, nothing written.
  auto missing = run_rsz(dir, "thumbnail -i in -o missing/ --size 64 --decode gpu --device 0,1023");
  EXPECT_EQ(missing.status, 2) << missing.err;
  EXPECT_EQ(std::count(missing.err.begin(), missing.err.end(), '\n'), 1) << missing.err;
  EXPECT_NE(missing.err.find("GPU 1023 is not one of them"), std::string::npos) << missing.err;
  EXPECT_FALSE(fs::exists(dir.path() / "missing"));
  // Every GPU of the machine (one or more): the one-GPU job's bytes, each lane having taken batches.
  auto all = run_rsz(dir, "thumbnail -i in -o all/ --size 64 --decode gpu --device all -q");
  ASSERT_EQ(all.status, 0) << all.err;
  const auto two = run_shell(dir, std::string("RSZ_GPU_STATS=1 '") + RSZ_BINARY +
                                      "' thumbnail -i in -o two/ --size 64 --decode gpu --device 1,0 -q");
  const bool has_two = two.err.find("GPU 1 is not one of them") == std::string::npos;
  if (has_two) {
    ASSERT_EQ(two.status, 0) << two.err;
    // The first GPU's lane runs from the start; the second joins once made (most of a second later: the run ends
    // once it has, though a job this small may be done before it takes a batch).
    const std::string first = "lane 0 (GPU 1): ";
    const std::size_t at = two.err.find(first);
    ASSERT_NE(at, std::string::npos) << two.err;
    EXPECT_NE(two.err.compare(at + first.size(), 10, "0 batches,"), 0) << two.err.substr(at, 80);
    EXPECT_NE(two.err.find("lane 1 (GPU 0) joined"), std::string::npos) << two.err;
    EXPECT_EQ(two.err.find("rsz: note: --device"), std::string::npos) << two.err;
  } else {
    EXPECT_EQ(two.status, 2) << two.err;
  }
  ASSERT_EQ(run_rsz(dir, "thumbnail -i in -o cpu/ --size 64 -q").status, 0);
  for (int i = 0; i < 150; ++i) {
    const std::string name = "r" + std::to_string(i) + ".jpg";
    const std::string expected = rsz::test::read_file(dir / ("one/" + name));
    EXPECT_EQ(rsz::test::read_file(dir / ("all/" + name)), expected) << name;
    if (has_two) {
      EXPECT_EQ(rsz::test::read_file(dir / ("two/" + name)), expected) << name;
    }
    // 4:4:4 files: the GPU's decoded pixels are libjpeg-turbo's, so the CPU job's bytes too.
    EXPECT_EQ(rsz::test::read_file(dir / ("cpu/" + name)), expected) << name;
  }
  // --backend cuda without --decode gpu: the inputs take the GPUs in turn, with the CPU job's bytes.
  if (has_two) {
    ASSERT_EQ(run_rsz(dir, "thumbnail -i in -o staged/ --size 64 --backend cuda --device 0,1 -q").status, 0);
    for (int i = 0; i < 150; ++i) {
      const std::string name = "r" + std::to_string(i) + ".jpg";
      EXPECT_EQ(rsz::test::read_file(dir / ("staged/" + name)), rsz::test::read_file(dir / ("cpu/" + name))) << name;
    }
  }
}

// --backend cuda without --decode gpu: the CPU decodes each image as the CPU job does (the scaled JPEG decode
// included) and the GPU stage runs the operators on batches of them, with no JPEG decoder made. Every output is the
// CPU job's bytes: thumbnails, contain's padded canvas, JPEG and PNG outputs, crop files; an image the stage does not
// take (alpha, 16-bit) runs alone on the GPU, with the CPU job's bytes too. Refused in one line where CUDA cannot run.
TEST(GpuJobs, BackendCudaBatchesTheCpuDecodedPixelsWithTheCpuJobsBytes) {
  ScratchDir dir("gpu-batched");
  fs::create_directories(dir.path() / "in");
  for (const char* name : {"rocket.jpg", "camera.png", "chelsea.png", "coffee.png"}) {
    fs::copy_file(photo(name), dir / (std::string("in/") + name));
  }
  const std::string data = std::string(RSZ_SOURCE_DIR) + "/tests/data/images/";
  for (const char* name : {"jpeg_420.jpg", "jpeg_gray.jpg", "rgb16.png", "rgb8_trns.png"}) {
    fs::copy_file(data + name, dir / (std::string("in/") + name));
  }
  const std::vector<std::string> names = {"rocket.jpg", "camera.png",   "chelsea.png", "coffee.png",
                                          "jpeg_420.jpg", "jpeg_gray.jpg", "rgb16.png",  "rgb8_trns.png"};
  const auto gpu_job = [&](const std::string& words) {
    return run_shell(dir, std::string("RSZ_GPU_STATS=1 '") + RSZ_BINARY + "' " + words + " --backend cuda -q");
  };
  auto thumbs = gpu_job("thumbnail -i in -o gpu_thumbs/ --size 64");
  if (thumbs.status == 2) {
    EXPECT_EQ(std::count(thumbs.err.begin(), thumbs.err.end(), '\n'), 1) << thumbs.err;
    EXPECT_EQ(thumbs.err.rfind("rsz: --backend: ", 0), 0u) << thumbs.err;
    EXPECT_FALSE(fs::exists(dir.path() / "gpu_thumbs"));
    GTEST_SKIP() << "--backend cuda cannot run here: " << thumbs.err;
  }
  ASSERT_EQ(thumbs.status, 0) << thumbs.err;
  // Where this build has the GPU stage (nvJPEG: --decode gpu runs), the six 8-bit images of 1 or 3 channels went
  // through it, and no decoder was made for it.
  const bool has_stage = !gpu_decode_refused(run_rsz(dir, "thumbnail -i in/rocket.jpg -o probe/ --size 8 --decode gpu -q"));
  if (has_stage) {
    EXPECT_NE(thumbs.err.find("rsz: GPU stage, lane 0 (GPU 0): "), std::string::npos) << thumbs.err;
    EXPECT_NE(thumbs.err.find(" batches, 6 files, "), std::string::npos) << thumbs.err;
    EXPECT_NE(thumbs.err.find("rsz: GPU jobs: 6, "), std::string::npos) << thumbs.err;
  }
  ASSERT_EQ(run_rsz(dir, "thumbnail -i in -o cpu_thumbs/ --size 64 --backend cpu -q").status, 0);
  auto padded = gpu_job("resample -i in -o gpu_padded/{stem}.jpg --size 80x60 --fit contain --background 51,102,153");
  ASSERT_EQ(padded.status, 0) << padded.err;
  ASSERT_EQ(
      run_rsz(dir, "resample -i in -o cpu_padded/{stem}.jpg --size 80x60 --fit contain --background 51,102,153 -q")
          .status,
      0);
  for (const std::string& name : names) {
    EXPECT_EQ(rsz::test::read_file(dir / ("gpu_thumbs/" + name)), rsz::test::read_file(dir / ("cpu_thumbs/" + name)))
        << name;
    const std::string stem = name.substr(0, name.find('.'));
    EXPECT_EQ(rsz::test::read_file(dir / ("gpu_padded/" + stem + ".jpg")),
              rsz::test::read_file(dir / ("cpu_padded/" + stem + ".jpg")))
        << name;
  }
  // Crops: files and one .npy of every crop, float32 (not quantized on the GPU).
  rsz::test::write_file(dir / "rois.json", R"({"rois": [[10, 20, 200, 180], [-15, 5, 60, 90.5], [3, 4, 30, 40]]})");
  for (const char* backend : {"cuda", "cpu"}) {
    const std::string b = backend;
    ASSERT_EQ(run_rsz(dir, "roi-align -i in --rois rois.json --output-size 32x24 -o '" + b +
                               "_crops/{stem}_{index}.png' --backend " + b + " -q")
                  .status,
              0);
    ASSERT_EQ(run_rsz(dir, "roi-align -i in/chelsea.png --rois rois.json --output-size 8x8 -o " + b +
                               ".npy --backend " + b + " -q")
                  .status,
              0);
  }
  EXPECT_EQ(rsz::test::read_file(dir / "cuda.npy"), rsz::test::read_file(dir / "cpu.npy"));
  for (const std::string& name : names) {
    const std::string stem = name.substr(0, name.find('.'));
    for (int index = 0; index < 3; ++index) {
      const std::string crop = stem + "_" + std::to_string(index) + ".png";
      EXPECT_EQ(rsz::test::read_file(dir / ("cuda_crops/" + crop)), rsz::test::read_file(dir / ("cpu_crops/" + crop)))
          << crop;
    }
  }
}

// --decode gpu under --max-memory: a JPEG the GPU decodes holds only its file, result and encoding while it waits for
// its batch, so a budget that runs one CPU-decoded 1080p job at a time lets several wait for the GPU together (few
// batches, not one a file). The files the CPU decodes run too, with the CPU job's bytes: a PNG and an EXIF-turned
// JPEG (their whole share from the start), a CMYK JPEG (planned for the GPU, which leaves it to the CPU: its job gives
// its share back and waits for its whole one); the 1080p photos are within nvJPEG's decoding difference.
TEST(GpuJobs, DecodeGpuJobsWaitForTheirBatchWithinTheMemoryBudget) {
  ScratchDir dir("gpu-budget");
  fs::create_directories(dir.path() / "in");
  ASSERT_EQ(run_rsz(dir, "resample -i " + photo("chelsea.png") + " -o big.jpg --size 1920x1080! -q").status, 0);
  constexpr int kPhotos = 16;
  for (int i = 0; i < kPhotos; ++i) fs::copy_file(dir / "big.jpg", dir / ("in/p" + std::to_string(i) + ".jpg"));
  fs::copy_file(photo("camera.png"), dir / "in/camera.png");
  fs::copy_file(std::string(RSZ_SOURCE_DIR) + "/tests/data/images/jpeg_cmyk.jpg", dir / "in/cmyk.jpg");
  rsz::test::write_file(dir / "in/sideways.jpg",
                        rsz::test::with_exif_orientation(rsz::test::read_file(photo("rocket.jpg")), 6));
  // A 1080p photo decoded on the CPU holds about 8 MiB here (its pixels, file, result and encoding), one decoded on
  // the GPU about 2 MiB: 10 MiB runs the first kind one at a time, the second about five at once.
  const std::string words = " -i in --size 224x224 --antialias --max-memory 10M -q";
  // One GPU: its lane's line counts every batch (with several, the photos would be shared between lanes).
  auto gpu = run_shell(dir, std::string("RSZ_GPU_STATS=1 '") + RSZ_BINARY + "' resample -o gpu/" + words +
                                " --decode gpu --device 0");
  if (gpu_decode_refused(gpu)) GTEST_SKIP() << "--decode gpu cannot run here: " << gpu.err;
  ASSERT_EQ(gpu.status, 0) << gpu.err;
  ASSERT_EQ(run_rsz(dir, "resample -o cpu/" + words).status, 0);
  std::smatch lane;
  ASSERT_TRUE(std::regex_search(gpu.err, lane, std::regex(R"(lane 0 \(GPU 0\): (\d+) batches, (\d+) files, )")))
      << gpu.err;
  EXPECT_GE(std::stoi(lane[2].str()), kPhotos) << gpu.err;     // the photos (and the CMYK file, where it was tried)
  EXPECT_LE(std::stoi(lane[1].str()), kPhotos / 2) << gpu.err;  // not one a file: several waited for the GPU at once
  for (const char* name : {"camera.png", "sideways.jpg", "cmyk.jpg"}) {
    EXPECT_EQ(rsz::test::read_file(dir / (std::string("gpu/") + name)),
              rsz::test::read_file(dir / (std::string("cpu/") + name)))
        << name;
  }
  for (int i = 0; i < kPhotos; ++i) {
    const std::string name = "p" + std::to_string(i) + ".jpg";
    const auto [largest, mean] =
        sample_difference(rsz::io::read_image(dir / ("gpu/" + name)), rsz::io::read_image(dir / ("cpu/" + name)));
    EXPECT_LE(largest, 40) << name;
    EXPECT_LT(mean, 2.0) << name;
  }
}
