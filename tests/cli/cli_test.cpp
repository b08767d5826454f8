// End-to-end tests of the rsz binary: every subcommand, every config, README examples, round trips, EXIF, bad
// input (exit status, message, no file left behind), --json, --dry-run and --jobs determinism.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <nlohmann/json.hpp>

#include "cli/cli_support.h"
#include "rsz/exec.h"
#include "rsz/io/image.h"
#include "rsz/io/npy.h"
#include "rsz/io/temporary_files.h"
#include "rsz/resample.h"
#include "rsz/roi_align.h"
#include "support/test_util.h"

namespace fs = std::filesystem;

namespace rsz {
namespace {

using test::list_files;
using test::run_rsz;
using test::ScratchDir;

std::string sample(const std::string& name) { return std::string(RSZ_SOURCE_DIR) + "/samples/photos/" + name; }
std::string config(const std::string& name) { return std::string(RSZ_SOURCE_DIR) + "/configs/" + name; }

// A deterministic test image: smooth gradients per channel, with alpha varying if present.
io::Image make_image(std::int64_t w, std::int64_t h, int channels, int bits) {
  io::Image img;
  img.width = w;
  img.height = h;
  img.channels = channels;
  img.bit_depth = bits;
  const std::size_t n = static_cast<std::size_t>(w * h * channels);
  const std::uint32_t max = bits == 8 ? 255u : 65535u;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t v = static_cast<std::uint32_t>((i * 2654435761u) % (max + 1));
    const bool alpha = (channels == 2 || channels == 4) && i % static_cast<std::size_t>(channels) ==
                                                                static_cast<std::size_t>(channels - 1);
    const std::uint32_t value = alpha ? std::max<std::uint32_t>(v, 1u) : v;  // alpha > 0 keeps colour recoverable
    if (bits == 8) {
      img.data8.push_back(static_cast<std::uint8_t>(value));
    } else {
      img.data16.push_back(static_cast<std::uint16_t>(value));
    }
  }
  return img;
}

void expect_same_pixels(const io::Image& a, const io::Image& b, const std::string& context) {
  ASSERT_EQ(a.width, b.width) << context;
  ASSERT_EQ(a.height, b.height) << context;
  ASSERT_EQ(a.channels, b.channels) << context;
  ASSERT_EQ(a.bit_depth, b.bit_depth) << context;
  EXPECT_TRUE(a.data8 == b.data8) << context;
  EXPECT_TRUE(a.data16 == b.data16) << context;
}

// ---- basics ----

TEST(Cli, VersionAndHelp) {
  ScratchDir dir("version");
  const auto v = run_rsz(dir, "--version");
  EXPECT_EQ(v.status, 0);
  EXPECT_EQ(v.out.rfind("rsz ", 0), 0u) << v.out;
  for (const char* cmd : {"resample", "upsample", "roi-align", "run", "info"}) {
    const auto h = run_rsz(dir, std::string(cmd) + " --help");
    EXPECT_EQ(h.status, 0) << cmd;
    EXPECT_NE(h.out.find("Examples:"), std::string::npos) << cmd << " help has no examples";
  }
}

TEST(Cli, UsageErrorsExit2) {
  ScratchDir dir("usage");
  for (const char* args : {"", "resample --bogus", "resample -i x.png", "resample -i nope.png -o o.gif --scale 2",
                           "resample -i " RSZ_SOURCE_DIR "/samples/photos/camera.png -o o.png",
                           "resample -i " RSZ_SOURCE_DIR "/samples/photos/camera.png -o o.png --mode cubic --scale 2",
                           "resample -i " RSZ_SOURCE_DIR "/samples/photos/camera.png -o o.png --scale 2 --size 3x3",
                           "resample -i " RSZ_SOURCE_DIR "/samples/photos/camera.png -o o.png --scale abc",
                           "upsample -i " RSZ_SOURCE_DIR "/samples/photos/camera.png -o o.png",
                           "roi-align -i " RSZ_SOURCE_DIR "/samples/photos/camera.png -o o/"}) {
    const auto r = run_rsz(dir, args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.err;
    EXPECT_FALSE(r.err.empty()) << args;
    EXPECT_TRUE(r.out.empty()) << args << " printed to stdout: " << r.out;
  }
  EXPECT_TRUE(list_files(dir.path()).empty());
  // A mistyped command is named, with the commands there are; top-level help still lists them all (only the named
  // command's flags are registered when the first word names one).
  const auto typo = run_rsz(dir, "thumbnial -i a.jpg -o b.jpg");
  EXPECT_EQ(typo.status, 2);
  EXPECT_EQ(typo.err, "rsz: thumbnial: no such command; the commands are resample, upsample, roi-align, thumbnail, "
                      "run, plan, merge, info (see rsz --help)\n");
  for (const char* top : {"--help", "help"}) {
    const auto help = run_rsz(dir, top);
    EXPECT_EQ(help.status, 0) << top;
    for (const char* cmd : {"resample", "upsample", "roi-align", "thumbnail", "run", "plan", "merge", "info"}) {
      EXPECT_NE(help.out.find(std::string("  ") + cmd + " "), std::string::npos)
          << top << " " << cmd << "\n" << help.out;
    }
  }
  const auto command_help = run_rsz(dir, "help thumbnail");  // as rsz thumbnail --help
  EXPECT_EQ(command_help.status, 0);
  EXPECT_NE(command_help.out.find("Usage: rsz thumbnail"), std::string::npos) << command_help.out;
}

// --backend cuda where the build has no usable CUDA backend is a usage error that says why, before anything is read
// or written: a build without one says so, a build with one says why it cannot run here (no driver or device);
// where one can run, the result is the CPU backend's, byte for byte.
TEST(Cli, BackendCudaRunsOrIsRefusedUpFront) {
  ScratchDir dir("backend_cuda");
  bool cuda_built = false;
  bool cuda_usable = false;
  for (const BackendInfo& b : backends()) {
    cuda_built = cuda_built || b.backend == Backend::Cuda;
    cuda_usable = cuda_usable || (b.backend == Backend::Cuda && b.available);
  }
  const std::string input = RSZ_SOURCE_DIR "/samples/photos/camera.png";
  const auto cpu = run_rsz(dir, "resample -i " + input + " -o cpu.png --scale 0.6 --backend cpu");
  ASSERT_EQ(cpu.status, 0) << cpu.err;
  for (const char* command : {"resample -i {in} -o gpu.png --scale 0.6 --backend cuda",
                              "upsample -i {in} -o up.png --factor 2 --backend cuda --device 0"}) {
    std::string args = command;
    args.replace(args.find("{in}"), 4, input);
    const auto r = run_rsz(dir, args);
    if (cuda_usable) {
      EXPECT_EQ(r.status, 0) << args << "\n" << r.err;
      continue;
    }
    EXPECT_EQ(r.status, 2) << args;
    EXPECT_NE(r.err.find("--backend"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(cuda_built ? "cuda cannot run here: " : "no CUDA backend"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  if (cuda_usable) {
    EXPECT_EQ(test::read_file(dir.path() / "gpu.png"), test::read_file(dir.path() / "cpu.png"));
  } else {
    EXPECT_FALSE(std::filesystem::exists(dir.path() / "gpu.png"));
    EXPECT_FALSE(std::filesystem::exists(dir.path() / "up.png"));
  }
  EXPECT_EQ(run_rsz(dir, "resample -i " + input + " -o x.png --scale 0.5 --device -1").status, 2);
}

// --verbose says in one line on stderr which backend runs and why: auto runs image pixels on the CPU and says why
// not cuda (or that it cannot run here); the output is the same bytes.
TEST(Cli, VerboseNamesTheBackendAndWhy) {
  ScratchDir dir("verbose");
  const std::string input = RSZ_SOURCE_DIR "/samples/photos/camera.png";
  const auto quiet = run_rsz(dir, "resample -i " + input + " -o quiet.png --scale 0.6 -q");
  ASSERT_EQ(quiet.status, 0) << quiet.err;
  const auto r = run_rsz(dir, "resample -i " + input + " -o loud.png --scale 0.6 -q --verbose");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(r.err.rfind("rsz: backend auto: cpu (", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("cuda"), std::string::npos) << r.err;
  EXPECT_EQ(test::read_file(dir.path() / "loud.png"), test::read_file(dir.path() / "quiet.png"));
  const auto cpu = run_rsz(dir, "resample -i " + input + " -o cpu.png --scale 0.6 -q -v --backend cpu");
  ASSERT_EQ(cpu.status, 0) << cpu.err;
  EXPECT_EQ(cpu.err.rfind("rsz: backend cpu (", 0), 0u) << cpu.err;
}

// ---- resample ----

// --no-sync leaves the flush to the system: the same bytes, nothing left beside them, for every command; the library's
// default stays a flush per output.
TEST(Cli, NoSyncWritesTheSameOutputs) {
  EXPECT_TRUE(io::sync_outputs());
  ScratchDir dir("no-sync");
  for (const std::string flag : {"", " --no-sync"}) {
    const std::string out = flag.empty() ? "synced" : "unsynced";
    auto r = run_rsz(dir, "resample -i " + sample("camera.png") + " -i " + sample("chelsea.png") + " -o " + out +
                              "/ --scale 0.5 -q" + flag);
    ASSERT_EQ(r.status, 0) << r.err;
    r = run_rsz(dir, "thumbnail -i " + sample("chelsea.png") + " -o " + out + "/t.jpg --size 64 -q" + flag);
    ASSERT_EQ(r.status, 0) << r.err;
  }
  EXPECT_EQ(list_files(dir / "unsynced"), list_files(dir / "synced"));
  for (const std::string& name : list_files(dir / "synced")) {
    EXPECT_EQ(test::read_file(dir / ("unsynced/" + name)), test::read_file(dir / ("synced/" + name))) << name;
  }
  io::set_sync_outputs(false);
  EXPECT_FALSE(io::sync_outputs());
  io::set_sync_outputs(true);
}

// A folder of mixed images into formats that cannot hold all of them finishes: alpha is laid over --background
// (white by default), 16 bits become 8 (the same bytes as --depth 8), one note each per run; --strict refuses and names
// every problem at once.
TEST(Cli, MixedFoldersFinish) {
  ScratchDir dir("mixed");
  fs::create_directories(dir.path() / "in");
  io::Image rgba;
  rgba.width = 3;
  rgba.height = 1;
  rgba.channels = 4;
  rgba.bit_depth = 8;
  rgba.data8 = {255, 0, 0, 255, 0, 255, 0, 0, 255, 0, 0, 128};  // opaque red, transparent green, half-covered red
  io::write_image(dir / "in/rgba.png", rgba);
  io::write_image(dir / "in/deep.png", make_image(4, 4, 3, 16));
  auto r = run_rsz(dir, "resample -i in -o out/{stem}.ppm --scale 1 --background 10,20,30");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("rsz: note: 1 input with alpha flattened onto the background"), std::string::npos) << r.err;
  const io::Image flat = io::read_image(dir / "out/rgba.ppm");
  ASSERT_EQ(flat.channels, 3);
  EXPECT_EQ(std::vector<int>(flat.data8.begin(), flat.data8.begin() + 6), (std::vector<int>{255, 0, 0, 10, 20, 30}));
  // Half covered: red x 128/255 over (10, 20, 30) x 127/255.
  const double a = 128.0 / 255.0;
  const double want[3] = {255.0 * a + 10.0 * (1 - a), 20.0 * (1 - a), 30.0 * (1 - a)};
  for (int k = 0; k < 3; ++k) EXPECT_NEAR(flat.data8[static_cast<std::size_t>(6 + k)], want[k], 1.0) << k;
  // The default background is white; 16 bits into BMP become 8, with the bytes of --depth 8.
  r = run_rsz(dir, "resample -i in -o bmp/{stem}.bmp --scale 1");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("rsz: note: 1 input with 16-bit samples written with 8 bits"), std::string::npos) << r.err;
  const io::Image on_white = io::read_image(dir / "bmp/rgba.bmp");
  EXPECT_EQ(std::vector<int>(on_white.data8.begin() + 3, on_white.data8.begin() + 6), (std::vector<int>{255, 255, 255}));
  ASSERT_EQ(run_rsz(dir, "resample -i in/deep.png -o deep8.bmp --scale 1 --depth 8 -q").status, 0);
  EXPECT_EQ(test::read_file(dir / "bmp/deep.bmp"), test::read_file(dir / "deep8.bmp"));
  // --strict: both problems, then the count; nothing written.
  r = run_rsz(dir, "resample -i in -o strict/{stem}.jpg --scale 1 --strict");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("strict/deep.jpg: JPEG cannot hold 16-bit samples"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("strict/rgba.jpg: JPEG cannot hold an alpha channel"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("rsz: 2 outputs cannot be written as asked (above); nothing was written"), std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(dir.path() / "strict"));
  r = run_rsz(dir, "resample -i in -o x.jpg --scale 1 --background pink");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--background pink: white, black, gray, #RRGGBB or R,G,B (each 0 to 255) is allowed"),
            std::string::npos)
      << r.err;
}

// A file is one input however many times it is named: a folder given twice, a file a pattern matches again, a
// symbolic link beside its target. The first name given is the one its output is named after.
TEST(Cli, AFileNamedTwiceIsOneInput) {
  ScratchDir dir("named_twice");
  fs::create_directories(dir.path() / "in");
  io::write_image(dir / "in/a.png", make_image(8, 6, 3, 8));
  fs::create_symlink("a.png", dir.path() / "in/b.png");
  auto r = run_rsz(dir, "resample -i in -i in -i 'in/*.png' -o out/ --scale 0.5");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("rsz: wrote 1 file"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::exists(dir.path() / "out/a.png"));
  EXPECT_FALSE(fs::exists(dir.path() / "out/b.png"));
  r = run_rsz(dir, "resample -i in/b.png -i in/a.png -o linked/ --scale 0.5");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(fs::exists(dir.path() / "linked/b.png"));
  EXPECT_FALSE(fs::exists(dir.path() / "linked/a.png"));
}

TEST(Cli, ResampleImageByScaleMatchesTheLibrary) {
  ScratchDir dir("resample_scale");
  const auto r = run_rsz(dir, "resample -i " + sample("chelsea.png") + " -o half.png --scale 0.5 --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto record = nlohmann::json::parse(r.out);
  EXPECT_EQ(record["output"], "half.png");
  EXPECT_EQ(record["shape"], (std::vector<std::int64_t>{1, 3, 150, 225}));
  EXPECT_EQ(record["dtype"], "float32");
  EXPECT_TRUE(record["seconds"].is_number());
  // The same computation through the library.
  const io::Image in = io::read_image(sample("chelsea.png"));
  const Tensor t = io::image_to_tensor(in, DataType::Float32);
  ResampleParams p;
  p.scales = {1, 1, 0.5f, 0.5f};
  Tensor out(DataType::Float32, resample_output_sizes(t.sizes(), p.scales));
  resample(t.view(), out.view(), p);
  expect_same_pixels(io::tensor_to_image(out.view(), 8), io::read_image(dir / "half.png"), "half.png");
}

// Every in-place case (8/16-bit, gray/RGB, JPEG, nearest and linear) gives the library's float-tensor results.
TEST(Cli, ResampleInPlaceMatchesTheFloatTensorPath) {
  ScratchDir dir("resample_in_place");
  io::write_image(dir / "rgb16.png", make_image(45, 31, 3, 16));
  io::write_image(dir / "gray8.png", make_image(45, 31, 1, 8));
  for (const std::string& name : {std::string("rgb16.png"), std::string("gray8.png"), sample("rocket.jpg")}) {
    for (const std::string mode : {"linear", "nearest"}) {
      const std::string in = name.find('/') == std::string::npos ? dir / name : name;
      const auto r = run_rsz(dir, "resample -i " + in + " -o out.png --scale 0.61,1.7 --mode " + mode + " -q");
      ASSERT_EQ(r.status, 0) << r.err;
      const io::Image image = io::read_image(in);
      const Tensor t = io::image_to_tensor(image, DataType::Float32);
      ResampleParams p;
      p.interpolation = mode == "linear" ? InterpolationMode::Linear : InterpolationMode::Nearest;
      p.scales = {1, 1, 1.7f, 0.61f};
      Tensor out(DataType::Float32, resample_output_sizes(t.sizes(), p.scales));
      resample(t.view(), out.view(), p);
      expect_same_pixels(io::tensor_to_image(out.view(), image.bit_depth), io::read_image(dir / "out.png"),
                         name + " " + mode);
    }
  }
}

TEST(Cli, QualityAndPngCompressionFlags) {
  ScratchDir dir("write_flags");
  const std::string in = sample("rocket.jpg");
  ASSERT_EQ(run_rsz(dir, "resample -i " + in + " -o q95.jpg --scale 0.5 -q").status, 0);
  ASSERT_EQ(run_rsz(dir, "resample -i " + in + " -o q30.jpg --scale 0.5 --quality 30 -q").status, 0);
  EXPECT_LT(fs::file_size(dir / "q30.jpg") * 2, fs::file_size(dir / "q95.jpg"));
  ASSERT_EQ(run_rsz(dir, "resample -i " + in + " -o fast.png --scale 0.5 -q").status, 0);
  ASSERT_EQ(run_rsz(dir, "resample -i " + in + " -o small.png --scale 0.5 --png-compression 9 -q").status, 0);
  EXPECT_LT(fs::file_size(dir / "small.png"), fs::file_size(dir / "fast.png"));
  expect_same_pixels(io::read_image(dir / "fast.png"), io::read_image(dir / "small.png"), "PNG levels");
  // --lossless WebP keeps the samples; the default is lossy, a lower quality smaller.
  ASSERT_EQ(run_rsz(dir, "resample -i " + in + " -o a.webp --scale 0.5 -q --lossless").status, 0);
  ASSERT_EQ(run_rsz(dir, "resample -i " + in + " -o b.webp --scale 0.5 --quality 50 -q").status, 0);
  ASSERT_EQ(run_rsz(dir, "resample -i " + in + " -o c.webp --scale 0.5 -q").status, 0);
  EXPECT_LT(fs::file_size(dir / "c.webp"), fs::file_size(dir / "a.webp"));
  expect_same_pixels(io::read_image(dir / "a.webp"), io::read_image(dir / "fast.png"), "lossless WebP");
  EXPECT_LT(fs::file_size(dir / "b.webp"), fs::file_size(dir / "a.webp"));
  for (const std::string bad : {"--quality 0", "--quality 101", "--png-compression 10", "--png-compression -2"}) {
    const auto r = run_rsz(dir, "resample -i " + in + " -o bad.jpg --scale 0.5 " + bad);
    EXPECT_EQ(r.status, 2) << bad;
    EXPECT_FALSE(fs::exists(dir / "bad.jpg")) << bad;
  }
}

// PNG and JPEG need neither OpenCV nor rsz's OpenCV module; the other formats report the missing module.
TEST(Cli, PngAndJpegWorkWithoutTheOpenCvModule) {
  ScratchDir dir("no_module");
  const std::string env = "RSZ_OPENCV_MODULE=/nonexistent/librsz_opencv_codecs.so ";
  const std::string rsz = std::string("'") + RSZ_BINARY + "' ";
  auto r = run_shell(dir, env + rsz + "resample -i " + sample("rocket.jpg") + " -o a.png --scale 0.5 -q");
  EXPECT_EQ(r.status, 0) << r.err;
  r = run_shell(dir, env + rsz + "resample -i a.png -o b.jpg --scale 0.5 -q");
  EXPECT_EQ(r.status, 0) << r.err;
  r = run_shell(dir, env + rsz + "resample -i a.png -o c.bmp --scale 0.5 -q");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("librsz_opencv_codecs.so"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "c.bmp"));
}

TEST(Cli, ResampleSizeWidthAndAspect) {
  ScratchDir dir("resample_size");
  ASSERT_EQ(run_rsz(dir, "resample -i " + sample("coffee.png") + " -o a.png --size 64x48").status, 0);
  // "+150" as the flag's check takes a whole number (strtoll).
  ASSERT_EQ(run_rsz(dir, "resample -i " + sample("coffee.png") + " -o b.png --width +150").status, 0);
  ASSERT_EQ(run_rsz(dir, "resample -i " + sample("coffee.png") + " -o c.jpg --height 40 --mode nearest").status, 0);
  const auto a = io::read_image_info(dir / "a.png");
  EXPECT_EQ(a.width, 64);
  EXPECT_EQ(a.height, 48);
  const auto b = io::read_image_info(dir / "b.png");
  EXPECT_EQ(b.width, 150);
  EXPECT_EQ(b.height, 100);  // 400 * 150 / 600
  const auto c = io::read_image_info(dir / "c.jpg");
  EXPECT_EQ(c.width, 60);
  EXPECT_EQ(c.height, 40);
  EXPECT_EQ(c.format, "jpeg");
}

TEST(Cli, ResampleNpyTensorModeWithConfigAndFlagOverride) {
  ScratchDir dir("resample_npy");
  const Tensor in = test::iota_f32({1, 2, 4, 6});
  io::write_npy(dir / "x.npy", in.view());
  ASSERT_EQ(run_rsz(dir, "resample -i x.npy -o y.npy --config " + config("resample_scale.json")).status, 0);
  const Tensor y = io::read_npy(dir / "y.npy");
  EXPECT_EQ(y.sizes(), (Dims{1, 2, 2, 3}));
  ResampleParams p;
  p.scales = {1, 1, 0.5f, 0.5f};
  Tensor expected(DataType::Float32, {1, 2, 2, 3});
  resample(in.view(), expected.view(), p);
  EXPECT_TRUE(test::bits_equal(test::to_vector(expected.view()), test::to_vector(y.view()), "config"));
  // A flag overrides the config: nearest.
  ASSERT_EQ(run_rsz(dir, "resample -i x.npy -o z.npy --config " + config("resample_scale.json") + " --mode nearest")
                .status,
            0);
  EXPECT_EQ(test::to_vector(io::read_npy(dir / "z.npy").view()),
            (std::vector<float>{7, 9, 11, 19, 21, 23, 31, 33, 35, 43, 45, 47}));  // ties go up, SEMANTICS §1.2
  // float16 tensors stay float16.
  io::write_npy(dir / "h.npy", test::convert(in.view(), DataType::Float16).view());
  ASSERT_EQ(run_rsz(dir, "resample -i h.npy -o h2.npy --scale 2").status, 0);
  EXPECT_EQ(io::read_npy(dir / "h2.npy").dtype(), DataType::Float16);
}

TEST(Cli, ResamplePresets) {
  ScratchDir dir("presets");
  io::write_npy(dir / "x.npy", test::make_f32({1, 1, 1, 4}, {0, 10, 20, 30}).view());
  // nearest_floor (PyTorch/OpenCV nearest): floor(o / 0.5) = 0, 2.
  ASSERT_EQ(run_rsz(dir, "resample -i x.npy -o f.npy --scales 1,1,1,0.5 --preset nearest_floor").status, 0);
  EXPECT_EQ(test::to_vector(io::read_npy(dir / "f.npy").view()), (std::vector<float>{0, 20}));
  // half_pixel nearest: ties up: 1, 3.
  ASSERT_EQ(run_rsz(dir, "resample -i x.npy -o h.npy --scales 1,1,1,0.5 --mode nearest").status, 0);
  EXPECT_EQ(test::to_vector(io::read_npy(dir / "h.npy").view()), (std::vector<float>{10, 30}));
  // align_corners into 7: scale (7 - 1) / (4 - 1) = 2, x = o / 2: 0, 5, 10, ..., 30.
  ASSERT_EQ(run_rsz(dir, "resample -i x.npy -o a.npy --output-sizes 1,1,1,7 --preset align_corners").status, 0);
  EXPECT_EQ(test::to_vector(io::read_npy(dir / "a.npy").view()), (std::vector<float>{0, 5, 10, 15, 20, 25, 30}));
  // asymmetric x2: x = o / 2 -> 0, 5, 10, 15, 20, 25, 30, 30.
  ASSERT_EQ(run_rsz(dir, "resample -i x.npy -o s.npy --scales 1,1,1,2 --preset asymmetric").status, 0);
  EXPECT_EQ(test::to_vector(io::read_npy(dir / "s.npy").view()), (std::vector<float>{0, 5, 10, 15, 20, 25, 30, 30}));
}

TEST(Cli, IdentityResampleRoundTripsImagesExactly) {
  ScratchDir dir("roundtrip");
  for (const int bits : {8, 16}) {
    for (const int channels : {1, 2, 3, 4}) {
      const std::string name = "in" + std::to_string(bits) + "_" + std::to_string(channels) + ".png";
      const io::Image img = make_image(13, 7, channels, bits);
      io::write_image(dir / name, img);
      for (const char* alpha : {"premultiplied", "straight"}) {
        const auto r = run_rsz(dir, "resample -i " + name + " -o out.png --scale 1 --alpha " + std::string(alpha));
        ASSERT_EQ(r.status, 0) << r.err;
        expect_same_pixels(img, io::read_image(dir / "out.png"), name + " " + alpha);
      }
      if (bits == 8) {
        ASSERT_EQ(run_rsz(dir, "resample -i " + name + " -o out16.png --scale 1 --dtype float16").status, 0);
        expect_same_pixels(img, io::read_image(dir / "out16.png"), name + " float16");
      }
    }
  }
}

TEST(Cli, NpyRoundTrip) {
  ScratchDir dir("npy_roundtrip");
  const Tensor in = test::random_f32({2, 3, 5, 7}, 9);
  io::write_npy(dir / "x.npy", in.view());
  ASSERT_EQ(run_rsz(dir, "resample -i x.npy -o y.npy --scale 1").status, 0);
  EXPECT_TRUE(test::bits_equal(test::to_vector(in.view()), test::to_vector(io::read_npy(dir / "y.npy").view()),
                               "identity"));
}

TEST(Cli, SixteenBitPngStaysSixteenBit) {
  ScratchDir dir("sixteen");
  io::write_image(dir / "in.png", make_image(40, 30, 3, 16));
  ASSERT_EQ(run_rsz(dir, "resample -i in.png -o out.png --scale 0.5").status, 0);
  const auto info = io::read_image_info(dir / "out.png");
  EXPECT_EQ(info.bit_depth, 16);
  EXPECT_EQ(info.width, 20);
  EXPECT_EQ(info.height, 15);
}

// A JPEG stored sideways with EXIF orientation 6 (turn clockwise to view): rsz works on the upright image, so its
// width and height swap and ROI boxes refer to upright pixels; --no-exif keeps the stored pixels.
TEST(Cli, ExifOrientationIsAppliedUnlessTurnedOff) {
  ScratchDir dir("exif");
  // Stored 64 x 32: left half black, right half white. Upright (turned clockwise): 32 x 64, top black, bottom white.
  io::Image stored;
  stored.width = 64;
  stored.height = 32;
  stored.channels = 1;
  for (std::int64_t y = 0; y < 32; ++y) {
    for (std::int64_t x = 0; x < 64; ++x) stored.data8.push_back(x < 32 ? 0 : 255);
  }
  io::write_image(dir / "plain.jpg", stored, 100);
  {
    std::ofstream file(dir / "sideways.jpg", std::ios::binary);
    file << test::with_exif_orientation(test::read_text(dir / "plain.jpg"), 6);
  }
  const auto info = run_rsz(dir, "info --json sideways.jpg");
  ASSERT_EQ(info.status, 0) << info.err;
  EXPECT_EQ(nlohmann::json::parse(info.out)["width"], 32);
  EXPECT_EQ(nlohmann::json::parse(info.out)["height"], 64);
  ASSERT_EQ(run_rsz(dir, "resample -i sideways.jpg -o up.png --scale 0.5").status, 0);
  const io::Image up = io::read_image(dir / "up.png");
  ASSERT_EQ(up.width, 16);
  ASSERT_EQ(up.height, 32);
  EXPECT_LT(up.data8[static_cast<std::size_t>(4 * 16 + 8)], 20);    // top: black
  EXPECT_GT(up.data8[static_cast<std::size_t>(28 * 16 + 8)], 235);  // bottom: white
  // A box over the upright bottom half is white.
  ASSERT_EQ(test::run_shell(dir, "echo '{\"rois\": [[0, 40, 32, 64]]}' > bottom.json").status, 0);
  ASSERT_EQ(run_rsz(dir, "roi-align -i sideways.jpg --rois bottom.json --output-size 4x4 -o crop.png").status, 0);
  for (const std::uint8_t v : io::read_image(dir / "crop.png").data8) EXPECT_GT(v, 235);
  // --no-exif: the stored 64 x 32 layout.
  ASSERT_EQ(run_rsz(dir, "resample -i sideways.jpg -o stored.png --scale 0.5 --no-exif").status, 0);
  const auto stored_info = io::read_image_info(dir / "stored.png");
  EXPECT_EQ(stored_info.width, 32);
  EXPECT_EQ(stored_info.height, 16);
}

TEST(Cli, RoiAlignImageToOneNpyTensor) {
  ScratchDir dir("roi_npy");
  const auto r = run_rsz(dir, "roi-align -i " + sample("chelsea.png") + " --rois " + RSZ_SOURCE_DIR +
                                  "/samples/rois/chelsea_eyes.json --output-size 8x6 --dtype float16 -o eyes.npy");
  ASSERT_EQ(r.status, 0) << r.err;
  const Tensor t = io::read_npy(dir / "eyes.npy");
  EXPECT_EQ(t.sizes(), (Dims{2, 3, 6, 8}));
  EXPECT_EQ(t.dtype(), DataType::Float16);
  for (const float v : test::to_vector(t.view())) {
    EXPECT_GE(v, 0.0f);
    EXPECT_LE(v, 1.0f);
  }
}

// A file per crop: the crops are computed a group at a time (16 MiB of results: 5 crops of 512 x 512 here), each
// group written before the next; the values are the one call's (the whole-tensor .npy), and the whole call's checks
// come first: a sample total over --max-samples that no group alone passes is refused before any crop is written.
TEST(Cli, RoiAlignCropsInGroupsKeepTheOneCallsValuesAndChecks) {
  ScratchDir dir("roi_groups");
  std::string boxes;
  for (int r = 0; r < 12; ++r) {
    boxes += std::string(r == 0 ? "" : ", ") + "[" + std::to_string(r * 10) + ", " + std::to_string(r * 3) + ", " +
             std::to_string(r * 10 + 256) + ", " + std::to_string(r * 3 + 256) + "]";
  }
  test::write_file(dir / "boxes.json", "{\"rois\": [" + boxes + "]}");
  const std::string base = "roi-align -i " + sample("chelsea.png") + " --rois boxes.json --output-size 512x512 -q ";
  // 12 ROIs x 3 channels x 512 x 512 outputs x 1 x 1 samples = 9437184.
  auto r = run_rsz(dir, base + "-o crops/{index}.npy --max-samples 9437183");
  EXPECT_EQ(r.status, 1) << r.err;  // the input fails, as the one call failed it
  EXPECT_NE(r.err.find("the ROIs need 9437184 samples"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("0 files written"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "crops"));
  r = run_rsz(dir, base + "-o crops/{index}.npy --max-samples 9437184");
  ASSERT_EQ(r.status, 0) << r.err;
  r = run_rsz(dir, base + "-o all.npy");
  ASSERT_EQ(r.status, 0) << r.err;
  const std::vector<float> all = test::to_vector(io::read_npy(dir / "all.npy").view());
  ASSERT_EQ(all.size(), std::size_t{12} * 3 * 512 * 512);
  for (int k = 0; k < 12; ++k) {
    const std::vector<float> crop = test::to_vector(io::read_npy(dir / ("crops/" + std::to_string(k) + ".npy")).view());
    ASSERT_EQ(crop.size(), std::size_t{3} * 512 * 512) << k;
    EXPECT_TRUE(std::equal(crop.begin(), crop.end(), all.begin() + static_cast<std::ptrdiff_t>(k * crop.size())))
        << "crop " << k;
  }
}

// ---- upsample ----

TEST(Cli, UpsampleImagesAndRank5Tensors) {
  ScratchDir dir("upsample");
  ASSERT_EQ(run_rsz(dir, "upsample -i " + sample("camera.png") + " -o big.png --config " +
                             config("upsample_2x_nearest.json"))
                .status,
            0);
  const io::Image small = io::read_image(sample("camera.png"));
  const io::Image big = io::read_image(dir / "big.png");
  ASSERT_EQ(big.width, 1024);
  ASSERT_EQ(big.height, 1024);
  for (std::int64_t y = 0; y < 1024; y += 37) {
    for (std::int64_t x = 0; x < 1024; x += 41) {
      ASSERT_EQ(big.data8[static_cast<std::size_t>(y * 1024 + x)],
                small.data8[static_cast<std::size_t>((y / 2) * 512 + x / 2)]);
    }
  }
  io::write_npy(dir / "v.npy", test::iota_f32({1, 1, 2, 2, 2}).view());
  ASSERT_EQ(run_rsz(dir, "upsample -i v.npy -o v2.npy --factor 1,2 --mode linear").status, 0);
  const Tensor v2 = io::read_npy(dir / "v2.npy");
  EXPECT_EQ(v2.sizes(), (Dims{1, 1, 2, 2, 4}));
  // Width x2 linear of rows [0, 1]: x = (o + 0.5) / 2 - 0.5 -> 0, 0.25, 0.75, 1.
  EXPECT_EQ(test::to_vector(v2.view()),
            (std::vector<float>{0, 0.25, 0.75, 1, 2, 2.25, 2.75, 3, 4, 4.25, 4.75, 5, 6, 6.25, 6.75, 7}));
}

// ---- roi-align ----

TEST(Cli, RoiAlignDatasetCropsWithLabels) {
  ScratchDir dir("roi_dataset");
  dir.copy_project_files();
  const auto r = run_rsz(dir, "roi-align --rois samples/rois/dataset.json --config configs/roi_align_crops.json "
                              "-o 'crops/{label}/{id}.png' --json");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(list_files(dir.path() / "crops"),
            (std::vector<std::string>{"cup/coffee-cup.png", "eye/chelsea-left-eye.png", "eye/chelsea-right-eye.png",
                                      "nose/chelsea-nose.png", "spoon/coffee-spoon.png"}));
  std::istringstream lines(r.out);
  std::string line;
  int records = 0;
  while (std::getline(lines, line)) {
    const auto j = nlohmann::json::parse(line);
    EXPECT_EQ(j["shape"], (std::vector<std::int64_t>{1, 3, 96, 96}));
    ++records;
  }
  EXPECT_EQ(records, 5);
  const auto info = io::read_image_info(dir / "crops/eye/chelsea-left-eye.png");
  EXPECT_EQ(info.width, 96);
  EXPECT_EQ(info.height, 96);
}

TEST(Cli, RoiAlignCropMatchesTheLibrary) {
  ScratchDir dir("roi_plain");
  const auto r = run_rsz(dir, "roi-align -i " + sample("chelsea.png") + " --rois " + RSZ_SOURCE_DIR +
                                  "/samples/rois/chelsea_eyes.json --output-size 20x10 --samples 2 -o eyes/");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(list_files(dir.path() / "eyes"), (std::vector<std::string>{"chelsea_0.png", "chelsea_1.png"}));
  const Tensor t = io::image_to_tensor(io::read_image(sample("chelsea.png")), DataType::Float32);
  const Tensor rois = test::make_f32({2, 4}, {130, 80, 215, 150, 290, 105, 350, 165});
  const Tensor batch = test::make_u32({2}, {0, 0});
  RoiAlignParams p;
  p.minimum_samples_per_output = 2;
  p.maximum_samples_per_output = 2;
  Tensor out(DataType::Float32, {2, 3, 10, 20});
  roi_align(t.view(), rois.view(), batch.view(), out.view(), p);
  const ConstTensorView second(out.data_as<float>() + 600, DataType::Float32, {1, 3, 10, 20});
  expect_same_pixels(io::tensor_to_image(second, 8), io::read_image(dir / "eyes/chelsea_1.png"), "crop 1");
}

TEST(Cli, RoiAlignTensorMode) {
  ScratchDir dir("roi_tensor");
  io::write_npy(dir / "x.npy", test::iota_f32({2, 1, 4, 4}).view());
  io::write_npy(dir / "r.npy", test::make_f32({2, 4}, {0, 0, 4, 4, 0, 0, 4, 4}).view());
  io::write_npy(dir / "b.npy", test::make_u32({2}, {1, 0}).view());
  const auto r = run_rsz(dir, "roi-align -i x.npy --rois r.npy --batch-indices b.npy --output-size 2x2 -o y.npy");
  ASSERT_EQ(r.status, 0) << r.err;
  const Tensor y = io::read_npy(dir / "y.npy");
  EXPECT_EQ(y.sizes(), (Dims{2, 1, 2, 2}));
  // Block averages of 4y + x (SEMANTICS §3 golden), +16 on batch 1.
  EXPECT_EQ(test::to_vector(y.view()), (std::vector<float>{18.5, 20.5, 26.5, 28.5, 2.5, 4.5, 10.5, 12.5}));
  // Max reduction and batch indices omitted (all 0).
  ASSERT_EQ(run_rsz(dir, "roi-align -i x.npy --rois r.npy --output-size 1x1 --reduction max -o m.npy").status, 0);
  EXPECT_EQ(test::to_vector(io::read_npy(dir / "m.npy").view()), (std::vector<float>{15, 15}));
}

// ---- run, info ----

TEST(Cli, BatchFileBuildsTheSampleDataset) {
  ScratchDir dir("batch");
  dir.copy_project_files();
  const auto r = run_rsz(dir, "run configs/batch.json --jobs 2");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("out"), std::string::npos) << "the summary says where the outputs are: " << r.err;
  const auto files = list_files(dir.path() / "out");
  const std::vector<std::string> expected{
      "crops/cup/coffee-cup.png",   "crops/eye/chelsea-left-eye.png", "crops/eye/chelsea-right-eye.png",
      "crops/nose/chelsea-nose.png", "crops/spoon/coffee-spoon.png",  "double/camera.png",
      "double/chelsea.png",          "double/coffee.png",             "double/rocket.png",
      "half/camera.png",             "half/chelsea.png",              "half/coffee.png",
      "half/rocket.jpg"};
  EXPECT_EQ(files, expected);
  EXPECT_EQ(io::read_image_info(dir / "out/half/coffee.png").width, 300);
  // --dry-run lists the same outputs and writes nothing.
  fs::remove_all(dir.path() / "out");
  const auto dry = run_rsz(dir, "run configs/batch.json --dry-run");
  ASSERT_EQ(dry.status, 0) << dry.err;
  EXPECT_EQ(std::count(dry.out.begin(), dry.out.end(), '\n'), 13);
  EXPECT_FALSE(fs::exists(dir.path() / "out"));
}

TEST(Cli, JobsOneAndTwoGiveByteIdenticalFiles) {
  ScratchDir dir("jobs");
  dir.copy_project_files();
  ASSERT_EQ(run_rsz(dir, "resample -i samples/photos -o one/ --scale 0.37,0.61 --jobs 1").status, 0);
  ASSERT_EQ(run_rsz(dir, "resample -i samples/photos -o two/ --scale 0.37,0.61 --jobs 2").status, 0);
  const auto one = list_files(dir.path() / "one");
  ASSERT_EQ(one.size(), 4u);
  ASSERT_EQ(one, list_files(dir.path() / "two"));
  for (const auto& f : one) {
    EXPECT_EQ(test::read_text(dir.path() / "one" / f), test::read_text(dir.path() / "two" / f)) << f;
  }
}

TEST(Cli, InfoTextAndJson) {
  ScratchDir dir("info");
  io::write_npy(dir / "t.npy", Tensor(DataType::Float16, {1, 2, 3, 4}).view());
  const auto text = run_rsz(dir, "info " + sample("camera.png") + " t.npy");
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("512x512, 1 channel (gray), 8-bit"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("t.npy: tensor float16 {1, 2, 3, 4}"), std::string::npos) << text.out;
  // Folders and quoted globs expand like everywhere else: one line per file.
  const auto folder = run_rsz(dir, "info --json " + std::string(RSZ_SOURCE_DIR) + "/samples/photos");
  ASSERT_EQ(folder.status, 0) << folder.err;
  EXPECT_EQ(std::count(folder.out.begin(), folder.out.end(), '\n'), 4);
  const auto glob = run_rsz(dir, "info '" + std::string(RSZ_SOURCE_DIR) + "/samples/photos/c*.png'");
  ASSERT_EQ(glob.status, 0) << glob.err;
  EXPECT_EQ(std::count(glob.out.begin(), glob.out.end(), '\n'), 3);  // camera, chelsea, coffee
  EXPECT_EQ(run_rsz(dir, "info missing.png").status, 1);  // a missing input is a failed input, as in every command
  const auto json = run_rsz(dir, "info --json " + sample("rocket.jpg"));
  ASSERT_EQ(json.status, 0);
  const auto j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["format"], "jpeg");
  EXPECT_EQ(j["width"], 640);
  EXPECT_EQ(j["height"], 427);
  EXPECT_EQ(j["channels"], 3);
}

// rsz info --backends: a line (or a JSON record) a backend of this build, as rsz::backends() says them; the host
// backends run on one device, a GPU backend names how many GPUs it sees (what --device all takes).
TEST(Cli, InfoBackendsSaysEveryBackendAndItsDevices) {
  ScratchDir dir("info-backends");
  const auto text = run_rsz(dir, "info --backends");
  ASSERT_EQ(text.status, 0) << text.err;
  const auto json = run_rsz(dir, "info --backends --json");
  ASSERT_EQ(json.status, 0) << json.err;
  std::istringstream lines(json.out);
  std::string line;
  std::size_t count = 0;
  for (const BackendInfo& b : backends()) {
    ASSERT_TRUE(std::getline(lines, line)) << json.out;
    const auto record = nlohmann::json::parse(line);
    EXPECT_EQ(record["backend"], to_string(b.backend));
    EXPECT_EQ(record["memory"], to_string(b.memory));
    EXPECT_EQ(record["available"], b.available);
    EXPECT_EQ(record["devices"], b.devices);
    if (b.backend != Backend::Cuda) {
      EXPECT_EQ(record["devices"], 1) << line;
    }
    const std::string said = std::string(to_string(b.backend)) + ": " + (b.available ? "available" : "not available");
    EXPECT_NE(text.out.find(said), std::string::npos) << text.out;
    if (b.backend == Backend::Cuda && b.available) {
      EXPECT_NE(text.out.find(std::to_string(b.devices) + (b.devices == 1 ? " GPU (--device all)" : " GPUs (--device all)")),
                std::string::npos)
          << text.out;
    }
    ++count;
  }
  EXPECT_FALSE(std::getline(lines, line)) << json.out;
  EXPECT_EQ(std::count(text.out.begin(), text.out.end(), '\n'), static_cast<std::ptrdiff_t>(count));
  EXPECT_NE(text.out.find("cpu: available, host memory; "), std::string::npos) << text.out;
}

// ---- bad input: message, exit status, nothing left behind ----

struct BadCase {
  std::string name;
  std::string setup;  // shell commands run first
  std::string args;
  int status;
  std::string needle;
};

TEST(Cli, BadInputIsReportedWithoutPartialOutput) {
  const std::string truncated = std::string(RSZ_SOURCE_DIR) + "/tests/data/images/truncated.jpg";
  const std::vector<BadCase> cases{
      {"truncated jpeg", "", "resample -i " + truncated + " -o out/x.png --scale 2", 1, "truncated.jpg"},
      {"empty file", ": > empty.png", "resample -i empty.png -o out/x.png --scale 2", 1, "empty.png"},
      {"text file", "echo hello > notes.png", "resample -i notes.png -o out/x.png --scale 2", 1, "notes.png"},
      {"too many pixels", "", "resample -i " + sample("camera.png") + " -o out/x.png --scale 2 --max-pixels 1000", 1,
       "1000"},
      {"bad json", "echo '{\"scales\": [1,1,2' > bad.json",
       "resample -i " + sample("camera.png") + " -o out/x.png --config bad.json", 2, "bad.json"},
      {"unknown key", "echo '{\"scale\": 2}' > k.json",
       "resample -i " + sample("camera.png") + " -o out/x.png --config k.json", 2, "scale"},
      {"wrong op", "echo '{\"op\": \"roi_align\"}' > op.json",
       "resample -i " + sample("camera.png") + " -o out/x.png --config op.json --scale 2", 2, "op"},
      {"bad enum", "echo '{\"interpolation\": \"cubic\", \"scales\": [1,1,2,2]}' > e.json",
       "resample -i " + sample("camera.png") + " -o out/x.png --config e.json", 2, "cubic"},
      {"uint32 tensor", "", "resample -i u.npy -o out/x.npy --scale 2", 1, "uint32"},
      {"rank 3 tensor", "", "resample -i r3.npy -o out/x.npy --scale 2", 1, "rank"},
      {"scale zero", "", "resample -i " + sample("camera.png") + " -o out/x.png --scales 1,1,0,1", 2,
       "--scales 1,1,0,1: resample: scales[2] = 0 is not allowed"},
      {"empty input name", "", "resample -i '' -o out/x.png --scale 0.5", 2,
       "-i \"\": an empty name; give a file, a folder or a quoted pattern"},
      {"--scale zero", "", "resample -i " + sample("camera.png") + " -o out/x.png --scale 0.5,0", 2,
       "--scale 0.5,0: resample: scales[2] = 0 is not allowed; each scale must be finite and > 0"},
      // Shorthands read their numbers as the fields' flags do (io::parse_float_list / parse_int_list).
      {"--scale not a number", "", "resample -i " + sample("camera.png") + " -o out/x.png --scale 0.5,x", 2,
       "--scale 0.5,x: 'x' is not a finite number"},
      {"--scale trailing comma", "", "resample -i " + sample("camera.png") + " -o out/x.png --scale 0.5,", 2,
       "--scale 0.5,: '' is not a finite number"},
      {"--spatial-scale count", "", "roi-align -i x.npy --rois r.npy --output-size 2x2 --spatial-scale 1,2,3 -o out/",
       2, "--spatial-scale 1,2,3: 3 values given; 1 to 2 comma-separated numbers are allowed"},
      {"--output-size shape", "", "roi-align -i x.npy --rois r.npy --output-size 8,8 -o out/y.npy", 2,
       "--output-size 8,8: expected 2 whole numbers separated by 'x'"},
      {"--factor too large", "", "upsample -i x.npy -o out/y.npy --factor 99999999999999999999", 2,
       "--factor 99999999999999999999: '99999999999999999999' is not a whole number >= 1"},
      {"scale zero in config", "echo '{\"scales\": [1,1,0,1]}' > z.json",
       "resample -i " + sample("camera.png") + " -o out/x.png --config z.json", 2,
       "z.json: key \"scales\" at /scales: resample: scales[2] = 0"},
      {"output size too large for the sample count", "",
       "roi-align -i x.npy --rois r.npy --output-size 2x2 --samples 3:2 -o out/y.npy", 2, "samples"},
      {"overwrite input", "cp " + sample("camera.png") + " c.png", "resample -i c.png -o c.png --scale 0.5", 2,
       "overwrite"},
      {"missing input", "", "resample -i missing.png -o out/x.png --scale 2", 1, "missing.png: no such file"},
      {"missing config", "", "resample -i " + sample("camera.png") + " -o out/x.png --config nope.json", 2,
       "nope.json"},
      {"missing rois", "", "roi-align -i " + sample("camera.png") + " --rois nope.json --output-size 8x8 -o out/", 2,
       "nope.json"},
      {"16-bit to jpeg, strict", "", "resample -i p16.png -o out/x.jpg --scale 1 --strict", 2, "16"},
      {"batch index out of range", "",
       "roi-align -i x.npy --rois r.npy --batch-indices b.npy --output-size 2x2 -o out/y.npy", 1,
       "batch_indices[0] = 5"},
      {"roi file bad box", "echo '{\"rois\": [[1,2,3]]}' > rb.json",
       "roi-align -i " + sample("camera.png") + " --rois rb.json --output-size 8x8 -o out/", 2, "rb.json"},
  };
  for (const BadCase& c : cases) {
    ScratchDir dir("bad");
    io::write_npy(dir / "u.npy", Tensor(DataType::UInt32, {1, 1, 2, 2}).view());
    io::write_npy(dir / "r3.npy", Tensor(DataType::Float32, {1, 2, 2}).view());
    io::write_npy(dir / "x.npy", Tensor(DataType::Float32, {1, 1, 4, 4}).view());
    io::write_npy(dir / "r.npy", test::make_f32({1, 4}, {0, 0, 1, 1}).view());
    io::write_npy(dir / "b.npy", test::make_u32({1}, {5}).view());
    io::write_image(dir / "p16.png", make_image(4, 4, 3, 16));
    if (!c.setup.empty()) {
      ASSERT_EQ(test::run_shell(dir, c.setup).status, 0) << c.name;
    }
    const auto before = list_files(dir.path());
    const auto r = run_rsz(dir, c.args);
    EXPECT_EQ(r.status, c.status) << c.name << ": " << r.err;
    EXPECT_NE(r.err.find(c.needle), std::string::npos) << c.name << ": '" << c.needle << "' not in: " << r.err;
    EXPECT_EQ(r.err.find("terminate"), std::string::npos) << c.name;
    EXPECT_TRUE(r.out.empty()) << c.name;
    EXPECT_EQ(list_files(dir.path()), before) << c.name << ": files were left behind";
  }
}

TEST(Cli, OneFailingFileDoesNotStopTheOthers) {
  ScratchDir dir("partial");
  dir.copy_project_files();
  ASSERT_EQ(test::run_shell(dir, "echo junk > samples/photos/broken.png").status, 0);
  const auto r = run_rsz(dir, "resample -i samples/photos -o out/ --scale 0.25 --jobs 2");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("broken.png"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("1 of 5 inputs failed"), std::string::npos) << r.err;
  EXPECT_EQ(list_files(dir.path() / "out"),
            (std::vector<std::string>{"camera.png", "chelsea.png", "coffee.png", "rocket.jpg"}));
}

// ---- README, the manual in docs/ and configs ----

// The `rsz ...` lines of a Markdown file's code blocks, in order (docs/DEVELOPMENT.md, "How the docs' examples are
// tested"): every fenced block but ```text synopses and blocks marked `<!-- example: NAME -->` on the line before
// their fence, which the test that names them runs (a Slurm recipe, Python, files of their own).
std::vector<std::string> doc_rsz_commands(const fs::path& file) {
  std::vector<std::string> commands;
  bool in_block = false;
  bool skip_block = false;
  std::string previous;
  std::istringstream lines(test::read_text(file));
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("```", 0) == 0) {
      if (!in_block) skip_block = line.rfind("```text", 0) == 0 || previous.rfind("<!-- example:", 0) == 0;
      in_block = !in_block;
    } else if (in_block && !skip_block && line.rfind("rsz ", 0) == 0) {
      commands.push_back(line.substr(4));
    }
    previous = line;
  }
  return commands;
}

// Runs a file's examples in order in one fresh scratch folder holding a copy of samples/ and configs/.
void run_doc_commands(const fs::path& file, const std::vector<std::string>& commands) {
  ScratchDir dir("doc_" + file.stem().string());
  dir.copy_project_files();
  for (const auto& args : commands) {
    const auto r = run_rsz(dir, args);
    EXPECT_EQ(r.status, 0) << file.filename().string() << " example failed: rsz " << args << "\n" << r.err;
  }
}

// Every `rsz ...` line in README.md code blocks runs successfully on a fresh copy of samples/ and configs/.
TEST(Cli, ReadmeExamplesRun) {
  const fs::path readme = fs::path(RSZ_SOURCE_DIR) / "README.md";
  const auto commands = doc_rsz_commands(readme);
  ASSERT_GE(commands.size(), 12u) << "README has too few rsz examples";
  run_doc_commands(readme, commands);
}

// The same for every part of the manual the README points to (docs/*.md), each file in a fresh scratch folder.
TEST(Cli, ReadmeManualExamplesRun) {
  const fs::path docs = fs::path(RSZ_SOURCE_DIR) / "docs";
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(docs)) {
    if (entry.path().extension() == ".md") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  std::size_t total = 0;
  for (const auto& file : files) {
    const auto commands = doc_rsz_commands(file);
    total += commands.size();
    if (!commands.empty()) run_doc_commands(file, commands);
  }
  // The parts whose examples are command lines: a part renamed or emptied must not drop its examples silently.
  for (const char* part : {"CLI.md", "DATASETS.md", "SCALE.md"}) {
    EXPECT_FALSE(doc_rsz_commands(docs / part).empty()) << "docs/" << part << " has no rsz examples";
  }
  EXPECT_GE(total, 25u) << "the manual in docs/ has too few rsz examples";
}

// Every config in configs/ is accepted by its subcommand on a sample.
TEST(Cli, EveryConfigRuns) {
  ScratchDir dir("configs");
  dir.copy_project_files();
  int ran = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(RSZ_SOURCE_DIR) / "configs")) {
    if (entry.path().extension() != ".json") continue;
    const std::string name = entry.path().filename().string();
    std::string args;
    if (name.rfind("resample", 0) == 0) {
      args = "resample -i samples/photos/coffee.png -o out/" + name + ".png --config configs/" + name;
    } else if (name.rfind("upsample", 0) == 0) {
      args = "upsample -i samples/photos/coffee.png -o out/" + name + ".png --config configs/" + name;
    } else if (name.rfind("roi_align", 0) == 0) {
      args = "roi-align --rois samples/rois/dataset.json -o 'out/" + name + "/{id}.png' --config configs/" + name;
    } else if (name.rfind("batch", 0) == 0) {
      args = "run configs/" + name + " -o out/" + name;
    } else {
      ADD_FAILURE() << "configs/" << name << " has no test: name it resample*, upsample*, roi_align* or batch*";
      continue;
    }
    const auto r = run_rsz(dir, args);
    EXPECT_EQ(r.status, 0) << "rsz " << args << "\n" << r.err;
    ++ran;
  }
  EXPECT_GE(ran, 5);
}

}  // namespace
}  // namespace rsz

namespace rsz {
namespace {

// A GIF is an input like any other image (its first frame; alpha where it is transparent); an animation is said once;
// a file of an input folder that no codec reads is named once in the summary (each on a line of its own with -v).
TEST(Cli, GifInputsAndTheFilesNoCodecReadsAreNamed) {
  test::ScratchDir dir("gif-inputs");
  fs::create_directories(dir.path() / "in");
  const fs::path gifs = fs::path(RSZ_SOURCE_DIR) / "tests/fuzz/corpus/image_gif";
  fs::copy_file(test::photo("chelsea.png"), dir / "in/chelsea.png");
  fs::copy_file(gifs / "animated.gif", dir / "in/animated.gif");
  fs::copy_file(gifs / "transparent.gif", dir / "in/transparent.gif");
  test::write_file(dir / "in/notes.txt", "not an image");
  auto r = run_rsz(dir, "thumbnail -i in -o out/ --size 8");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("rsz: note: 1 input animated (GIF): the first frame is read, the others are not\n"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("wrote 3 files in"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("; 1 file in the input folders not read (no codec reads it): in/notes.txt\n"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(list_files(dir.path() / "out"),
            (std::vector<std::string>{"animated.png", "chelsea.png", "transparent.png"}));
  EXPECT_EQ(io::read_image_info(dir / "out/transparent.png").channels, 4);
  r = run_rsz(dir, "info in/animated.gif");
  EXPECT_EQ(r.out, "in/animated.gif: gif 4x3, 4 channels (RGBA), 8-bit, animated (the first frame is read)\n") << r.err;
  r = run_rsz(dir, "thumbnail -i in -o out2/ --size 8 -v");
  EXPECT_NE(r.err.find("(no codec reads it), listed below\nrsz: not read: in/notes.txt\n"), std::string::npos)
      << r.err;
  // A pattern chooses its files: nothing to say of the others.
  r = run_rsz(dir, "thumbnail -i 'in/*.png' -o out3/ --size 8");
  EXPECT_EQ(r.err.find("not read"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace rsz

namespace rsz {
namespace {

// JPEG XL through libjxl, with fixtures made by its own cjxl / djxl (Debian's libjxl-tools): a lossless file reads as
// its source's samples, a lossy one as djxl decodes it; a damaged file fails alone with rsz's one line, none of
// libjxl's traces (Debian's build prints one per failure; the program mutes them); --max-pixels refuses from the
// header; outputs lossless are exact (8 and 16 bits) and lossy ones smaller at a lower --quality.
TEST(Cli, JpegXlInputsAndOutputs) {
  test::ScratchDir dir("jxl");
  if (test::run_shell(dir, "command -v cjxl && command -v djxl").status != 0) {
    GTEST_SKIP() << "cjxl / djxl (libjxl-tools) are not installed";
  }
  fs::create_directories(dir.path() / "in");
  auto r = run_rsz(dir, "resample -i " + test::photo("chelsea.png") + " -o plain.png --scale 0.5 --strip -q");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto shell = [&](const std::string& line) {
    const auto s = test::run_shell(dir, line);
    ASSERT_EQ(s.status, 0) << line << ": " << s.err;
  };
  shell("cjxl plain.png in/lossless.jxl -d 0 && cjxl plain.png in/lossy.jxl -d 2 && djxl in/lossy.jxl theirs.png");
  r = run_rsz(dir, "info in/lossless.jxl");
  EXPECT_EQ(r.out, "in/lossless.jxl: jxl 225x150, 3 channels (RGB), 8-bit\n") << r.err;
  r = run_rsz(dir, "resample -i in -o 'mine/{stem}.png' --scale 1");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(io::read_image(dir / "mine/lossless.png").data8, io::read_image(dir / "plain.png").data8);
  // Lossy decoding is libjxl's floating point, which may differ by a level between machines (an aarch64 rsz under
  // qemu against this machine's djxl: 15 of 79,800 samples by one level): within two levels of djxl's samples, most
  // of them equal.
  const io::Image lossy = io::read_image(dir / "mine/lossy.png");
  const io::Image theirs_lossy = io::read_image(dir / "theirs.png");
  ASSERT_EQ(lossy.data8.size(), theirs_lossy.data8.size());
  std::size_t differ = 0;
  for (std::size_t i = 0; i < lossy.data8.size(); ++i) {
    ASSERT_LE(std::abs(lossy.data8[i] - theirs_lossy.data8[i]), 2) << i;
    differ += lossy.data8[i] != theirs_lossy.data8[i] ? 1 : 0;
  }
  EXPECT_LT(differ, lossy.data8.size() / 100);
  // Damaged: bytes of the lossy file's body flipped, and the file cut short.
  std::string body = test::read_file(dir / "in/lossy.jxl");
  for (std::size_t i = 40; i < body.size(); i += 37) body[i] = static_cast<char>(body[i] ^ 0x5a);
  test::write_file(dir / "in/damaged.jxl", body);
  const std::string whole = test::read_file(dir / "in/lossless.jxl");
  test::write_file(dir / "in/cut.jxl", whole.substr(0, whole.size() / 2));
  r = run_rsz(dir, "resample -i in -o 'again/{stem}.png' --scale 0.5");
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("rsz: in/cut.jxl: the JPEG XL file is truncated"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("rsz: in/damaged.jxl: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("2 of 4 inputs failed; 2 files written"), std::string::npos) << r.err;
  std::istringstream lines(r.err);
  for (std::string line; std::getline(lines, line);) EXPECT_EQ(line.rfind("rsz: ", 0), 0u) << line;
  r = run_rsz(dir, "resample -i in/lossless.jxl -o big.png --scale 1 --max-pixels 1000");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("more than --max-pixels"), std::string::npos) << r.err;
  // Outputs.
  r = run_rsz(dir, "resample -i plain.png -o out/l8.jxl --scale 1 --lossless -q");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(io::read_image(dir / "out/l8.jxl").data8, io::read_image(dir / "plain.png").data8);
  r = run_rsz(dir, "resample -i plain.png -o p16.png --scale 1 --depth 16 -q");
  ASSERT_EQ(r.status, 0) << r.err;
  r = run_rsz(dir, "resample -i p16.png -o out/l16.jxl --scale 1 --lossless -q");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(io::read_image(dir / "out/l16.jxl").data16, io::read_image(dir / "p16.png").data16);
  shell("djxl out/l8.jxl theirs_l8.png");
  EXPECT_EQ(io::read_image(dir / "theirs_l8.png").data8, io::read_image(dir / "plain.png").data8);
  for (const char* q : {"1", "30", "95"}) {  // 1: past libjxl's largest distance, held at it
    r = run_rsz(dir, std::string("resample -i plain.png -o out/q") + q + ".jxl --scale 1 --quality " + q + " -q");
    ASSERT_EQ(r.status, 0) << r.err;
  }
  EXPECT_LT(fs::file_size(dir.path() / "out/q30.jxl"), fs::file_size(dir.path() / "out/q95.jxl"));
  // Started with standard error closed: no file rsz opens takes its number, so muting it swaps no file.
  fs::create_directories(dir.path() / "many");
  const std::string png = test::read_file(dir / "plain.png");
  for (int i = 0; i < 6; ++i) {
    test::write_file(dir / ("many/l" + std::to_string(i) + ".jxl"), whole);
    test::write_file(dir / ("many/p" + std::to_string(i) + ".png"), png);
  }
  r = run_rsz(dir, "resample -i many -o closed/ --format png --scale 0.5 -j 2 2>&-");
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(list_files(dir.path() / "closed").size(), 12u);
}

// AVIF outputs from the command line: a folder converted with --format avif, lossless exact (its PNG twin's samples),
// lossy smaller at a lower --quality, metadata kept unless --strip, and gray written as RGB (how it reads back).
TEST(Cli, AvifOutputs) {
  test::ScratchDir dir("avif-outputs");
  auto r = run_rsz(dir, "thumbnail -i " + test::photo("rocket.jpg") + " -i " + test::photo("chelsea.png") +
                            " -o out/ --format avif --size 96 --lossless");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(list_files(dir.path() / "out"), (std::vector<std::string>{"chelsea.avif", "rocket.avif"}));
  r = run_rsz(dir, "thumbnail -i " + test::photo("chelsea.png") + " -o twin.png --size 96 -q");
  ASSERT_EQ(r.status, 0) << r.err;
  const io::Image lossless = io::read_image(dir / "out/chelsea.avif");
  const io::Image twin = io::read_image(dir / "twin.png");
  EXPECT_EQ(lossless.data8, twin.data8);
  EXPECT_EQ(lossless.icc_profile, twin.icc_profile);
  EXPECT_EQ(io::read_image_info(dir / "out/chelsea.avif").format, "avif");
  for (const char* q : {"20", "80"}) {
    r = run_rsz(dir, std::string("thumbnail -i ") + test::photo("chelsea.png") + " -o q" + q + ".avif --size 96 --strip "
                     "--quality " + q + " -q");
    ASSERT_EQ(r.status, 0) << r.err;
  }
  EXPECT_LT(fs::file_size(dir.path() / "q20.avif"), fs::file_size(dir.path() / "q80.avif"));
  EXPECT_EQ(io::read_image(dir / "q20.avif").icc_profile, "");
  // Sides past what libheif reads (32768) are refused before anything is written.
  r = run_rsz(dir, "upsample -i " + test::photo("chelsea.png") + " -o wide.avif --factor 1,80 -q");
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("at most 32768 a side is allowed"), std::string::npos) << r.err;
  r = run_rsz(dir, "thumbnail -i " + test::photo("chelsea.png") + " -o gray.avif --size 32 --grayscale --lossless -q");
  ASSERT_EQ(r.status, 0) << r.err;
  const io::Image gray = io::read_image(dir / "gray.avif");
  ASSERT_EQ(gray.channels, 3);
  for (std::size_t i = 0; i < gray.data8.size(); i += 3) {
    ASSERT_EQ(gray.data8[i], gray.data8[i + 1]);
    ASSERT_EQ(gray.data8[i], gray.data8[i + 2]);
  }
}

// HEIC and AVIF inputs, made here with libheif's own encoder (heif-enc, Debian's libheif-examples) from a sample photo
// without its colour profile: rsz reads the pixels libheif's heif-convert writes (8-bit: the same bytes; 10-bit: the
// same 10-bit values, stretched to 16 bits as v * 65535 / 1023 where heif-convert shifts them left), alpha included;
// a file cut short fails alone; a file declaring a huge image is refused from its boxes, before decoding.
TEST(Cli, HeicAndAvifInputsReadWhatLibheifDecodes) {
  test::ScratchDir dir("heif-inputs");
  if (test::run_shell(dir, "command -v heif-enc && command -v heif-convert").status != 0) {
    GTEST_SKIP() << "heif-enc / heif-convert (libheif-examples) are not installed";
  }
  fs::create_directories(dir.path() / "in");
  auto r = run_rsz(dir, "resample -i " + test::photo("chelsea.png") + " -o plain8.png --scale 0.5 --strip -q");
  ASSERT_EQ(r.status, 0) << r.err;
  r = run_rsz(dir, "resample -i plain8.png -o plain16.png --depth 16 --scale 1 -q");
  ASSERT_EQ(r.status, 0) << r.err;
  r = run_rsz(dir, "upsample -i " + std::string(RSZ_SOURCE_DIR) + "/tests/data/images/palette4_trns.png -o rgba.png "
                  "--factor 16 --mode nearest --alpha straight -q");  // 48 x 32, alpha 0 where the palette says so
  ASSERT_EQ(r.status, 0) << r.err;
  const auto shell = [&](const std::string& line) {
    const auto s = test::run_shell(dir, line);
    ASSERT_EQ(s.status, 0) << line << ": " << s.err;
  };
  shell("heif-enc -q 60 plain8.png -o in/a.heic && heif-enc -A -q 60 plain8.png -o in/b.avif && "
        "heif-enc -b 10 -q 60 plain16.png -o in/c10.heic");
  r = run_rsz(dir, "info in");
  EXPECT_EQ(r.out,
            "in/a.heic: heic 225x150, 3 channels (RGB), 8-bit\nin/b.avif: avif 225x150, 3 channels (RGB), 8-bit\n"
            "in/c10.heic: heic 225x150, 3 channels (RGB), 16-bit\n")
      << r.err;
  r = run_rsz(dir, "resample -i in -o 'mine/{stem}.png' --scale 1");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("wrote 3 files"), std::string::npos) << r.err;
  for (const char* name : {"a", "b"}) {
    shell(std::string("heif-convert in/") + name + (name[0] == 'a' ? ".heic " : ".avif ") + "theirs_" + name + ".png");
    const io::Image mine = io::read_image(dir / ("mine/" + std::string(name) + ".png"));
    const io::Image theirs = io::read_image(dir / ("theirs_" + std::string(name) + ".png"));
    EXPECT_EQ(mine.data8, theirs.data8) << name;
  }
  shell("heif-convert in/c10.heic theirs_c10.png");
  const io::Image mine = io::read_image(dir / "mine/c10.png");
  const io::Image theirs = io::read_image(dir / "theirs_c10.png");
  ASSERT_EQ(mine.bit_depth, 16);
  ASSERT_EQ(mine.data16.size(), theirs.data16.size());
  for (std::size_t i = 0; i < mine.data16.size(); ++i) {
    const std::uint32_t v = theirs.data16[i] >> 6;  // the 10-bit value heif-convert shifted
    ASSERT_EQ(mine.data16[i], (v * 65535 + 511) / 1023) << i;
  }
  // Alpha.
  shell("heif-enc -q 80 rgba.png -o rgba.heic && heif-convert rgba.heic theirs_rgba.png");
  r = run_rsz(dir, "resample -i rgba.heic -o mine_rgba.png --scale 1 --alpha straight -q");
  ASSERT_EQ(r.status, 0) << r.err;
  const io::Image alpha = io::read_image(dir / "mine_rgba.png");
  ASSERT_EQ(alpha.channels, 4);
  EXPECT_EQ(alpha.data8[3], 0);  // the palette's transparent entry, top left
  EXPECT_EQ(alpha.data8, io::read_image(dir / "theirs_rgba.png").data8);
  // Cut short: that input fails, the others are written.
  const std::string whole = test::read_file(dir / "in/a.heic");
  test::write_file(dir / "in/cut.heic", whole.substr(0, whole.size() / 2));
  r = run_rsz(dir, "resample -i in -o 'again/{stem}.png' --scale 0.5");
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("rsz: in/cut.heic: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("1 of 4 inputs failed; 3 files written"), std::string::npos) << r.err;
  // A declared size of 1048576 x 1048576 (the ispe boxes patched): refused before anything is decoded.
  std::string bomb = whole;
  for (std::size_t at = bomb.find("ispe"); at != std::string::npos; at = bomb.find("ispe", at + 4)) {
    bomb.replace(at + 8, 8, std::string("\x00\x10\x00\x00\x00\x10\x00\x00", 8));
  }
  test::write_file(dir / "bomb.heic", bomb);
  r = run_rsz(dir, "info bomb.heic");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("bomb.heic"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("exceeds a libheif security limit"), std::string::npos) << r.err;  // its side limit
}

// A HEIC whose grid is among its own tiles (found by fuzzing: libheif 1.15 recursed until the stack or, a thread a
// level, the memory ran out): refused in one line before anything is decoded.
TEST(Cli, AHeicGridMadeOfItselfIsRefused) {
  test::ScratchDir dir("heif-cycle");
  // A grid among its own tiles through its alpha image; the same behind an iref reference whose size is wrong (which
  // libheif reads all the same).
  for (const char* seed : {"image_heic-grid-cycle", "image_heic-iref-size-hides-cycle"}) {
    SCOPED_TRACE(seed);
    fs::remove(dir / "out.png");
    fs::copy_file(std::string(RSZ_SOURCE_DIR) + "/tests/fuzz/regressions/" + seed, dir / "cycle.heic",
                  fs::copy_options::overwrite_existing);
    const auto r = run_rsz(dir, "resample -i cycle.heic -o out.png --scale 0.5");
    if (r.err.find("cannot read HEIC") != std::string::npos) GTEST_SKIP() << r.err;  // no libheif here
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_NE(r.err.find("rsz: cycle.heic: its item references cannot be decoded (item 2 is among the items it is "
                         "made of)\n"),
              std::string::npos)
        << r.err;
    EXPECT_FALSE(fs::exists(dir.path() / "out.png"));
  }
}

}  // namespace
}  // namespace rsz
