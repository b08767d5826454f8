// RESAMPLE2/3 from the command line and `rsz thumbnail`, end to end on a real photo: --antialias and
// --rounding-direction give exactly the core operator's bits on the decoded pixels, the JSON keys equal the flags,
// and thumbnail is the documented preset (a box, only shrinking unless --enlarge, antialiased unless --no-antialias).
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/cli_support.h"
#include "support/test_util.h"
#include "rsz/io/image.h"
#include "rsz/io/npy.h"
#include "rsz/resample.h"

namespace rsz {
namespace {

using test::run_rsz;
using test::ScratchDir;
using test::photo;
namespace fs = std::filesystem;

const std::string kPhoto = std::string(RSZ_SOURCE_DIR) + "/samples/photos/chelsea.png";  // 451 x 300

Tensor npy_of(const ScratchDir& dir, const std::string& command) {
  const auto r = run_rsz(dir, command + " -o out.npy -q");
  EXPECT_EQ(r.status, 0) << command << "\n" << r.err;
  return io::read_npy(dir / "out.npy");
}

bool same_bits(const Tensor& a, const Tensor& b) {
  return a.sizes() == b.sizes() && a.dtype() == b.dtype() &&
         std::memcmp(a.data(), b.data(), static_cast<std::size_t>(a.element_count()) * element_size(a.dtype())) == 0;
}

// The core operator (reference backend) on the photo's decoded 8-bit samples, read in place.
Tensor core_result(const ResampleParams& params, const Dims& out_sizes) {
  const io::Image image = io::read_image(kPhoto);
  const std::int64_t c = image.channels;
  const ConstTensorView in(image.data8.data(), DataType::UNorm8, {1, c, image.height, image.width},
                           {image.height * image.width * c, 1, image.width * c, c});
  Tensor out(DataType::Float32, out_sizes);
  resample(in, out.view(), params, {Backend::Reference, 1});
  return out;
}

TEST(Resample3Cli, AntialiasIsTheCoreOperatorOnTheDecodedPixels) {
  ScratchDir dir("antialias");
  const Tensor got = npy_of(dir, "resample -i " + kPhoto + " --scale 0.2 --antialias");
  ResampleParams p;
  p.scales = {1, 1, 0.2f, 0.2f};
  p.antialiased = true;
  const Tensor want = core_result(p, {1, 3, 60, 90});
  EXPECT_TRUE(same_bits(got, want));
  // The 2-tap filter gives other values; a config's "antialiased": true gives the flag's.
  EXPECT_FALSE(same_bits(npy_of(dir, "resample -i " + kPhoto + " --scale 0.2"), want));
  test::write_file(dir / "aa.json", R"({"scales": [1, 1, 0.2, 0.2], "antialiased": true})");
  EXPECT_TRUE(same_bits(npy_of(dir, "resample -i " + kPhoto + " --config aa.json"), want));
}

TEST(Resample3Cli, RoundingDirectionIsTheCoreOperator) {
  ScratchDir dir("rounding");
  for (const auto& [name, rounding] : {std::pair{"floor", NearestRounding::Floor},
                                       std::pair{"increasing", NearestRounding::Ceil},
                                       std::pair{"round_prefer_floor", NearestRounding::RoundPreferFloor}}) {
    const Tensor got = npy_of(dir, "resample -i " + kPhoto + " --scale 0.5 --mode nearest --input-offsets 0 "
                                   "--output-offsets 0.5 --rounding-direction " + std::string(name));
    // An image's batch and channel axes are copied (image mode, rsz/io/resize.h): the offsets given for every axis
    // apply to H and W only (on C, 0.5 with floor would take each channel from the one before it).
    ResampleParams p;
    p.interpolation = InterpolationMode::Nearest;
    p.scales = {1, 1, 0.5f, 0.5f};
    p.input_pixel_offsets = {0, 0, 0, 0};
    p.output_pixel_offsets = {0, 0, 0.5f, 0.5f};
    p.rounding_direction = rounding;
    EXPECT_TRUE(same_bits(got, core_result(p, {1, 3, 150, 225}))) << name;
  }
  const auto r = run_rsz(dir, "resample -i " + kPhoto + " -o x.png --scale 0.5 --rounding-direction up");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--rounding-direction"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "x.png"));
}

TEST(Thumbnail, FitsWithinTheBoxOnlyShrinkingAntialiased) {
  ScratchDir dir("thumbnail");
  const std::string in = "thumbnail -i " + kPhoto;
  const Tensor thumb = npy_of(dir, in + " --size 256");
  EXPECT_EQ(thumb.sizes(), (Dims{1, 3, 170, 256}));
  // The preset, spelled out with resample's flags.
  EXPECT_TRUE(same_bits(thumb, npy_of(dir, "resample -i " + kPhoto + " --size '256x256>' --antialias")));
  EXPECT_TRUE(same_bits(npy_of(dir, in + " --size 256 --no-antialias"),
                        npy_of(dir, "resample -i " + kPhoto + " --size '256x256>'")));
  EXPECT_FALSE(same_bits(npy_of(dir, in + " --size 256 --no-antialias"), thumb));
  // Smaller than the box: kept, unless --enlarge; a cover box is filled and cropped.
  EXPECT_EQ(npy_of(dir, in + " --size 1000").sizes(), (Dims{1, 3, 300, 451}));
  EXPECT_EQ(npy_of(dir, in + " --size 1000 --enlarge").sizes(), (Dims{1, 3, 665, 1000}));
  EXPECT_EQ(npy_of(dir, in + " --size 128 --fit cover").sizes(), (Dims{1, 3, 128, 128}));
  EXPECT_EQ(npy_of(dir, in + " --size x100").sizes(), (Dims{1, 3, 100, 150}));
  const auto both = run_rsz(dir, in + " --size '300x300>' --enlarge -o t.png");
  EXPECT_EQ(both.status, 2);
  EXPECT_NE(both.err.find("--size 300x300> with --enlarge: the '>' suffix only shrinks"), std::string::npos) << both.err;
  const auto missing = run_rsz(dir, in + " -o t.png");
  EXPECT_EQ(missing.status, 2);
  EXPECT_NE(missing.err.find("--size"), std::string::npos) << missing.err;
}

// A folder of photos as a user runs it: one JPEG per photo, EXIF orientation applied, the box respected.
// --dry-run --json says each output's shape and the exact RESAMPLE1 call planned for it (the plan the run then
// carries out, nothing planned twice): the real run writes that shape, and --shrink-on-load's scaled decode shows.
TEST(Thumbnail, DryRunSaysThePlannedCall) {
  ScratchDir dir("thumb-dry-plan");
  auto r = run_rsz(dir, "thumbnail -i " + photo("rocket.jpg") + " -o th/ --size 64 --dry-run --json --shrink-on-load");
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json planned = nlohmann::json::parse(r.out);
  EXPECT_EQ(planned["shape"], nlohmann::json::parse("[1, 3, 43, 64]"));
  EXPECT_EQ(planned["dtype"], "float32");
  const nlohmann::json& resize = planned["resize"];
  EXPECT_EQ(resize["input_sizes"], nlohmann::json::parse("[1, 3, 427, 640]"));
  EXPECT_EQ(resize["shrink_on_load"], 4);  // 640 -> 64: a 1/4 decode leaves the filter 2.5x
  EXPECT_EQ(resize["mode"], "linear");
  EXPECT_EQ(resize["antialiased"], true);
  EXPECT_EQ(resize["scales"][3], 0.1);  // float32 0.1 in its shortest form
  EXPECT_EQ(resize["canvas"], planned["shape"]);
  EXPECT_FALSE(fs::exists(dir.path() / "th"));
  r = run_rsz(dir, "thumbnail -i " + photo("rocket.jpg") + " -o th/ --size 64 --json -q --shrink-on-load");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["shape"], planned["shape"]);
  // A chained batch step is planned from what the step before it will write: a JPEG, decoded scaled.
  test::write_file(dir / "chain.json",
                   "{\"inputs\": [\"" + photo("rocket.jpg") + "\"], \"output_dir\": \"c\", \"shrink_on_load\": true, "
                   "\"steps\": [{\"op\": \"thumbnail\", \"config\": {\"size\": \"400\"}, \"output\": \"{stem}.jpg\"}, "
                   "{\"op\": \"thumbnail\", \"input\": \"previous\", \"config\": {\"size\": \"40\"}, "
                   "\"output\": \"{stem}_small.jpg\"}]}");
  r = run_rsz(dir, "run chain.json --dry-run --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string second = r.out.substr(r.out.find('\n') + 1);
  EXPECT_EQ(nlohmann::json::parse(second)["resize"]["input_sizes"], nlohmann::json::parse("[1, 3, 267, 400]"));
  EXPECT_EQ(nlohmann::json::parse(second)["resize"]["shrink_on_load"], 4);
  // Without --shrink-on-load the full decode is planned.
  r = run_rsz(dir, "thumbnail -i " + photo("rocket.jpg") + " -o th2/ --size 64 --dry-run --json");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["resize"]["shrink_on_load"], 1);
}

TEST(Thumbnail, FolderOfPhotos) {
  ScratchDir dir("thumbnail_folder");
  const auto r = run_rsz(dir, "thumbnail -i " + std::string(RSZ_SOURCE_DIR) +
                                  "/samples/photos -o 'thumbs/{stem}.jpg' --size 160 --quality 85 -q");
  ASSERT_EQ(r.status, 0) << r.err;
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir / "thumbs")) {
    const io::Image image = io::read_image(entry.path().string());
    EXPECT_LE(image.width, 160) << entry.path();
    EXPECT_LE(image.height, 160) << entry.path();
    EXPECT_TRUE(image.width == 160 || image.height == 160) << entry.path();
    ++count;
  }
  EXPECT_EQ(count, 4);
}

// A folder's inputs reuse the buffers of the ones before them whatever the allocator's environment says: with
// MALLOC_TRIM_THRESHOLD_=65536 (what Dask sets for its workers) the page faults stay those of a plain run, instead
// of every input's buffers being unmapped and faulted in again.
TEST(Thumbnail, BuffersAreReusedWhateverTheAllocatorEnvironment) {
  ScratchDir dir("reuse");
  std::filesystem::create_directories(dir / "in");
  for (int i = 0; i < 40; ++i) {
    for (const char* name : {"chelsea.png", "rocket.jpg"}) {
      std::filesystem::copy_file(std::string(RSZ_SOURCE_DIR) + "/samples/photos/" + name,
                                 dir / ("in/" + std::to_string(i) + "_" + name));
    }
  }
  const auto faults = [&](const std::string& env, const std::string& out) {
    return test::rsz_usage(dir, "thumbnail -i in -o " + out + "/ --size 64 -q -j 1", "ru_minflt", env);
  };
  const long plain = faults("", "a");
  const long trimmed = faults("MALLOC_TRIM_THRESHOLD_=65536 MALLOC_MMAP_THRESHOLD_=65536", "b");
  ASSERT_GT(plain, 0);
  EXPECT_LT(trimmed, plain * 3 / 2) << "plain " << plain << ", with the environment " << trimmed;
}

// --format chooses the format of outputs named by a folder or {ext} ("convert this folder to JPEG", as mogrify
// -format does); a template naming another extension is refused rather than --format being ignored.
TEST(Thumbnail, FormatChoosesTheFormatOfFolderAndTemplateOutputs) {
  ScratchDir dir("thumb-format");
  auto r = run_rsz(dir, "thumbnail -i " + photo("camera.png") + " -i " + photo("chelsea.png") +
                            " --size 32 -o jpgs/ --format jpg -q");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(test::list_files(dir.path() / "jpgs"), (std::vector<std::string>{"camera.jpg", "chelsea.jpg"}));
  EXPECT_EQ(test::read_file(dir / "jpgs/camera.jpg").substr(0, 3), std::string("\xff\xd8\xff"));
  r = run_rsz(dir, "resample -i " + photo("coffee.png") + " --scale 0.25 -o 'webp/{stem}{ext}' --format webp -q");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(test::read_file(dir / "webp/coffee.webp").substr(8, 4), "WEBP");
  r = run_rsz(dir, "thumbnail -i " + photo("camera.png") + " --size 32 -o 'named/{stem}.png' --format jpg");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--format jpg: -o named/{stem}.png names .png files"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir.path() / "named"));
}

// An identity resize, and a nearest upsample, reproduce an RGBA image exactly, the colour of fully transparent pixels
// included (premultiplying alpha would zero it, and cannot change any other result of a one-pixel sample).
TEST(Thumbnail, IdentityAndNearestKeepTheColourOfTransparentPixels) {
  ScratchDir dir("alpha-identity");
  io::Image image;
  image.width = 7;
  image.height = 5;
  image.channels = 4;
  image.data8.resize(7 * 5 * 4);
  for (std::size_t i = 0; i < image.data8.size(); ++i) image.data8[i] = static_cast<std::uint8_t>(i * 37 % 251);
  for (std::size_t p = 0; p < 7 * 2; ++p) image.data8[p * 4 + 3] = 0;  // two rows fully transparent, colour kept
  io::write_image(dir / "rgba.png", image);
  auto r = run_rsz(dir, "resample -i rgba.png --scale 1 -o same.png -q");
  ASSERT_EQ(r.status, 0) << r.err;
  const io::Image same = io::read_image(dir / "same.png");
  EXPECT_TRUE(same.data8 == image.data8);
  r = run_rsz(dir, "upsample -i rgba.png --factor 2 -o twice.png -q");
  ASSERT_EQ(r.status, 0) << r.err;
  const io::Image twice = io::read_image(dir / "twice.png");
  ASSERT_EQ(twice.width, 14);
  for (std::int64_t y = 0; y < 10; ++y) {
    for (std::int64_t x = 0; x < 14; ++x) {
      for (int c = 0; c < 4; ++c) {
        ASSERT_EQ(twice.data8[static_cast<std::size_t>((y * 14 + x) * 4 + c)],
                  image.data8[static_cast<std::size_t>(((y / 2) * 7 + x / 2) * 4 + c)]) << y << " " << x << " " << c;
      }
    }
  }
  // A real resize still filters premultiplied: output row 0 averages the two transparent rows, so it is transparent
  // and, premultiplied, colourless (straight filtering would have averaged the hidden colours).
  r = run_rsz(dir, "resample -i rgba.png --scale 0.5 -o half.png -q");
  ASSERT_EQ(r.status, 0) << r.err;
  const io::Image half = io::read_image(dir / "half.png");
  ASSERT_EQ(half.channels, 4);
  for (std::int64_t x = 0; x < half.width; ++x) {
    for (int c = 0; c < 4; ++c) EXPECT_EQ(half.data8[static_cast<std::size_t>(x * 4 + c)], 0) << x << " " << c;
  }
}

// A misspelt flag is named, with the nearest flag, before any other complaint ("--size is required" hid it); the
// help's folder example writes what its note says.
TEST(Thumbnail, AMisspeltFlagIsNamedWithTheNearestOne) {
  ScratchDir dir("thumb-typo");
  auto r = run_rsz(dir, "thumbnail -i " + photo("camera.png") + " --sise 64 -o x.png");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "rsz: --sise: no such flag of rsz thumbnail; did you mean --size? (see rsz thumbnail --help)\n");
  r = run_rsz(dir, "resample -i " + photo("camera.png") + " --scale 0.5 -o x.png --qualty=80");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--qualty: no such flag of rsz resample; did you mean --quality?"), std::string::npos) << r.err;
  r = run_rsz(dir, "resample -i " + photo("camera.png") + " --scale 0.5 -o x.png --zzzzzzzz");
  EXPECT_EQ(r.err, "rsz: --zzzzzzzz: no such flag of rsz resample (see rsz resample --help)\n");
  EXPECT_FALSE(fs::exists(dir.path() / "x.png"));
  fs::create_directories(dir.path() / "photos/cats");
  fs::copy_file(photo("camera.png"), dir.path() / "photos/cats/a.png");
  r = run_rsz(dir, "thumbnail -r -i photos/ -o 'thumbs/{relpath}.jpg' --size 32x24 --quality 85 -q");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(fs::exists(dir.path() / "thumbs/cats/a.jpg"));
  EXPECT_NE(run_rsz(dir, "thumbnail --help").out.find("-o 'thumbs/{relpath}.jpg'"), std::string::npos);
}

}  // namespace
}  // namespace rsz
