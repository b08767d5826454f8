// End-to-end tests of rsz against hostile and careless input: one test per class of failure the CLI must survive
// (silent wrong results, crashes, hangs, memory exhaustion, signals, path escapes, late usage errors, library
// chatter). Every case checks the exit status, that stderr holds only rsz's own one-line messages, and that nothing
// half-written is left behind. Cases that could hang run under `timeout` (a safety net, not a timed assertion);
// memory cases run under an address-space limit (ulimit -v) so that a failure is a refusal, not an OOM kill.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>
#include <utility>

#include "cli/cli_support.h"
#include "rsz/io/image.h"
#include "rsz/io/npy.h"
#include "support/test_util.h"

namespace fs = std::filesystem;

namespace rsz {
namespace {

using test::CommandResult;
using test::list_files;
using test::run_rsz;
using test::run_shell;
using test::ScratchDir;

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAddressSanitizer = true;  // ASan reserves terabytes of address space: no ulimit -v there
#else
constexpr bool kAddressSanitizer = false;
#endif
#if defined(RSZ_TEST_EMULATED)
constexpr bool kEmulated = true;  // under qemu-user (scripts/test-aarch64.sh), which a tight ulimit -v stops
#else
constexpr bool kEmulated = false;
#endif

using test::photo;

// Every line on stderr comes from rsz ("rsz: ..."), and there is at least one.
void expect_rsz_lines(const CommandResult& r, const std::string& context) {
  EXPECT_FALSE(r.err.empty()) << context;
  std::istringstream lines(r.err);
  std::string line;
  while (std::getline(lines, line)) {
    EXPECT_EQ(line.rfind("rsz: ", 0), 0u) << context << ": a stderr line not from rsz: " << line;
  }
}

void expect_refused(const CommandResult& r, int status, const std::string& needle, const std::string& context) {
  EXPECT_EQ(r.status, status) << context << "\n" << r.err;
  EXPECT_NE(r.err.find(needle), std::string::npos) << context << ": '" << needle << "' not in: " << r.err;
  EXPECT_TRUE(r.out.empty()) << context << " printed to stdout: " << r.out;
  expect_rsz_lines(r, context);
}

// No temporary output file (".name.tmp-...") anywhere under `root`.
void expect_no_temporaries(const fs::path& root, const std::string& context) {
  for (const std::string& f : list_files(root)) {
    EXPECT_EQ(f.find(".tmp-"), std::string::npos) << context << ": temporary file left behind: " << f;
  }
}

std::string png_chunk(const std::string& type, const std::string& data) {
  auto be32 = [](std::uint32_t v) {
    return std::string{static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
                       static_cast<char>(v)};
  };
  const std::string body = type + data;
  const auto crc = static_cast<std::uint32_t>(
      ::crc32(0, reinterpret_cast<const Bytef*>(body.data()), static_cast<uInt>(body.size())));
  return be32(static_cast<std::uint32_t>(data.size())) + body + be32(crc);
}

// A PNG with the given header size (8-bit RGB) whose zlib stream holds `rows_bytes` of filtered rows followed by
// `extra_bytes` more inflated bytes (zeros), compressed at level 9.
std::string make_png(std::uint32_t width, std::uint32_t height, std::size_t rows_bytes, std::size_t extra_bytes) {
  z_stream z{};
  EXPECT_EQ(deflateInit(&z, 9), Z_OK);
  std::string compressed;
  std::vector<unsigned char> zeros(1 << 20, 0);
  std::vector<unsigned char> out(1 << 20);
  std::size_t left = rows_bytes + extra_bytes;
  for (;;) {
    const std::size_t take = std::min(left, zeros.size());
    z.next_in = zeros.data();
    z.avail_in = static_cast<uInt>(take);
    left -= take;
    const int flush = left == 0 ? Z_FINISH : Z_NO_FLUSH;
    int rc = Z_OK;
    do {
      z.next_out = out.data();
      z.avail_out = static_cast<uInt>(out.size());
      rc = deflate(&z, flush);
      compressed.append(reinterpret_cast<char*>(out.data()), out.size() - z.avail_out);
    } while (z.avail_out == 0);
    if (flush == Z_FINISH && rc == Z_STREAM_END) break;
  }
  deflateEnd(&z);
  auto be32 = [](std::uint32_t v) {
    return std::string{static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
                       static_cast<char>(v)};
  };
  std::string png = "\x89PNG\r\n\x1a\n";
  png += png_chunk("IHDR", be32(width) + be32(height) + std::string("\x08\x02\x00\x00\x00", 5));
  for (std::size_t i = 0; i < compressed.size(); i += 1 << 16) png += png_chunk("IDAT", compressed.substr(i, 1 << 16));
  png += png_chunk("IEND", "");
  return png;
}

// The sample JPEG with its frame header patched to claim width x height (the data is far too short for it).
std::string jpeg_claiming(std::uint16_t width, std::uint16_t height) {
  std::string jpeg = test::read_file(photo("rocket.jpg")).substr(0, 1024);
  for (std::size_t i = 2; i + 9 < jpeg.size(); ++i) {
    const auto marker = static_cast<unsigned char>(jpeg[i + 1]);
    if (static_cast<unsigned char>(jpeg[i]) == 0xff && (marker == 0xc0 || marker == 0xc2)) {
      jpeg[i + 5] = static_cast<char>(height >> 8);
      jpeg[i + 6] = static_cast<char>(height & 0xff);
      jpeg[i + 7] = static_cast<char>(width >> 8);
      jpeg[i + 8] = static_cast<char>(width & 0xff);
      return jpeg;
    }
  }
  ADD_FAILURE() << "no SOF marker in the first KiB of rocket.jpg";
  return jpeg;
}

// ---- silent wrong results ----

TEST(Hostile, Float16NpyRoisOnImagesCropTheSameBoxesAsJson) {
  ScratchDir dir("f16rois");
  const std::vector<float> boxes{10, 20, 90, 140, 200, 50, 400, 250};  // integers: exact in float16
  io::write_npy(dir / "r32.npy", test::make_f32({2, 4}, boxes).view());
  io::write_npy(dir / "r16.npy", test::convert(test::make_f32({2, 4}, boxes).view(), DataType::Float16).view());
  test::write_file(dir / "r.json", "{\"rois\": [[10, 20, 90, 140], [200, 50, 400, 250]]}");
  const std::string base = "roi-align -q -i " + photo("chelsea.png") + " --output-size 4x4 ";
  for (const char* dtype : {"float32", "float16"}) {
    const std::string json_out = std::string("json_") + dtype + ".npy";
    ASSERT_EQ(run_rsz(dir, base + "--rois r.json --dtype " + dtype + " -o " + json_out).status, 0);
    const Tensor expected = io::read_npy(dir / json_out);
    for (const char* rois : {"r32.npy", "r16.npy"}) {
      const std::string out = std::string(rois) + "_" + dtype + ".npy";
      const auto r = run_rsz(dir, base + "--rois " + rois + " --dtype " + dtype + " -o " + out);
      ASSERT_EQ(r.status, 0) << rois << " " << dtype << ": " << r.err;
      const Tensor got = io::read_npy(dir / out);
      ASSERT_EQ(got.sizes(), expected.sizes());
      ASSERT_EQ(got.byte_size(), expected.byte_size());
      EXPECT_EQ(std::memcmp(got.data(), expected.data(), got.byte_size()), 0) << rois << " with --dtype " << dtype;
      // Not the degenerate [0, 0, 0, 0] box: the crop is not flat.
      const std::vector<float> values = test::to_vector(test::convert(got.view(), DataType::Float32).view());
      EXPECT_NE(*std::min_element(values.begin(), values.end()), *std::max_element(values.begin(), values.end()));
    }
  }
}

// ---- crashes ----

TEST(Hostile, DeeplyNestedNpyHeaderIsAnError) {
  ScratchDir dir("npynest");
  const std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': " + std::string(20000, '(') + "}";
  std::string header = dict + std::string(64 - (10 + dict.size() + 1) % 64, ' ') + "\n";
  std::string npy = std::string("\x93NUMPY\x02\x00", 8);
  const auto length = static_cast<std::uint32_t>(header.size());
  npy += std::string{static_cast<char>(length & 0xff), static_cast<char>((length >> 8) & 0xff),
                     static_cast<char>((length >> 16) & 0xff), static_cast<char>(length >> 24)};
  test::write_file(dir / "deep.npy", npy + header);
  expect_refused(run_rsz(dir, "resample -i deep.npy -o out.npy --scale 2"), 1, "nested more than 16 deep", "npy");
  expect_refused(run_rsz(dir, "info deep.npy"), 1, "nested", "info");
}

// ---- hangs: non-regular files, huge ROIs, decompression bombs ----

TEST(Hostile, NonRegularFilesAreRefusedWithoutBlocking) {
  ScratchDir dir("fifo");
  ASSERT_EQ(::mkfifo((dir / "pipe.png").c_str(), 0600), 0);
  ASSERT_EQ(::mkfifo((dir / "pipe.npy").c_str(), 0600), 0);
  ASSERT_EQ(::mkfifo((dir / "pipe.json").c_str(), 0600), 0);
  fs::create_directories(dir / "folder.json");
  const std::string img = photo("chelsea.png");
  const struct {
    const char* args;
    int status;
    const char* needle;
  } cases[] = {
      {"resample -i pipe.png -o out.png --scale 0.5", 1, "pipe (FIFO)"},
      {"resample -i pipe.npy -o out.npy --scale 0.5", 1, "pipe (FIFO)"},
      {"resample -i /dev/zero -o out.png --scale 0.5", 1, "character device"},
      {"info /dev/zero", 1, "character device"},
      {"resample -i IMG -o out.png --config pipe.json", 2, "pipe (FIFO)"},
      {"resample -i IMG -o out.png --config folder.json", 2, "folder"},
      {"roi-align -i IMG --rois pipe.json --output-size 4x4 -o out/", 2, "pipe (FIFO)"},
      {"roi-align -i IMG --rois pipe.npy --output-size 4x4 -o out/", 2, "pipe (FIFO)"},
      {"run pipe.json", 2, "pipe (FIFO)"},
  };
  for (const auto& c : cases) {
    std::string args = c.args;
    if (const auto at = args.find("IMG"); at != std::string::npos) args.replace(at, 3, img);
    const auto r = run_shell(dir, "timeout -k 10 60 '" + std::string(RSZ_BINARY) + "' " + args);
    expect_refused(r, c.status, c.needle, args);
  }
  EXPECT_FALSE(fs::exists(dir / "out.png"));
  EXPECT_FALSE(fs::exists(dir / "out"));
}

TEST(Hostile, HugeAndOverflowingRoisAreRefusedNotRun) {
  ScratchDir dir("hugeroi");
  test::write_file(dir / "big.json", "{\"rois\": [[0, 0, 1e7, 1e7]]}");
  test::write_file(dir / "far.json", "{\"rois\": [[0, 0, 3e38, 10]]}");
  test::write_file(dir / "inf.json", "{\"rois\": [[-3e38, 0, 3e38, 10]]}");
  const std::string base = "timeout -k 10 60 '" + std::string(RSZ_BINARY) + "' roi-align -i " + photo("chelsea.png") +
                           " --output-size 4x4 -o out.npy --rois ";
  expect_refused(run_shell(dir, base + "big.json"), 1, "--max-samples", "1e7 box, adaptive sampling");
  expect_refused(run_shell(dir, base + "far.json"), 1, "--max-samples", "3e38 box");
  expect_refused(run_shell(dir, base + "inf.json"), 1, "roi", "extent overflowing to infinity");
  // A fixed sample count keeps the same huge box cheap: it runs.
  const auto fixed = run_shell(dir, base + "big.json --samples 2");
  EXPECT_EQ(fixed.status, 0) << fixed.err;
  // The budget is a flag: 0 lifts it, a small one refuses a modest request.
  expect_refused(run_shell(dir, base + "big.json --samples 2 --max-samples 10"), 1, "--max-samples", "small budget");
  EXPECT_FALSE(fs::exists(dir / "out.npy.tmp"));
  expect_no_temporaries(dir.path(), "rois");
}

TEST(Hostile, PngDecompressionBombIsRefused) {
  ScratchDir dir("bomb");
  const std::size_t rows = 100 * (1 + 100 * 3);
  test::write_file(dir / "ok.png", make_png(100, 100, rows, 0));
  test::write_file(dir / "bomb.png", make_png(100, 100, rows, std::size_t{1} << 30));  // 1 GiB of hidden zeros
  const auto ok = run_rsz(dir, "resample -q -i ok.png -o ok_out.png --scale 0.5");
  EXPECT_EQ(ok.status, 0) << ok.err;
  const auto r = run_shell(dir, "timeout -k 10 60 '" + std::string(RSZ_BINARY) + "' resample -i bomb.png -o b.png --scale 2");
  expect_refused(r, 1, "decompression bomb", "bomb");
  EXPECT_FALSE(fs::exists(dir / "b.png"));
}

// ---- memory ----

// Runs rsz under an address-space limit (KiB) where that is meaningful.
CommandResult run_limited(const ScratchDir& dir, const std::string& args, long limit_kib = 3L << 20) {
  // Under qemu-user a limit below 1 GiB stops the emulator itself (its 128 MiB code buffer and the guest's mappings):
  // there the refusals are rsz's own (the memory budget), checked without it.
  const bool tight_for_emulator = kEmulated && limit_kib < (1L << 20);
  const std::string limit =
      kAddressSanitizer || tight_for_emulator ? "" : "ulimit -v " + std::to_string(limit_kib) + "; ";
  return run_shell(dir, limit + "timeout -k 10 300 '" + std::string(RSZ_BINARY) + "' " + args);
}

TEST(Hostile, ImagesDeclaringHugeSizesAreRefusedBeforeDecoding) {
  ScratchDir dir("hugeimg");
  test::write_file(dir / "huge.jpg", jpeg_claiming(16384, 16384));
  test::write_file(dir / "huge.png", make_png(16384, 16384, 1000, 0));
  for (const char* name : {"huge.jpg", "huge.png"}) {
    const auto r = run_limited(dir, std::string("resample -i ") + name + " -o out.png --scale 0.1 --max-memory 256M");
    // Both are decoded band by band (a window of rows fits the budget): the JPEG's header walk finds the short file
    // first, libpng the missing rows as it reaches them.
    expect_refused(r, 1, std::string(name) == "huge.jpg" ? "the JPEG file is truncated" : "not a valid PNG file", name);
    // Within the default budget the decoder may try, but the short data is a failed input, never an OOM kill.
    const auto d = run_limited(dir, std::string("resample -i ") + name + " -o out.png --scale 0.1");
    EXPECT_EQ(d.status, 1) << name << ": " << d.err;
    expect_rsz_lines(d, name);
  }
  EXPECT_FALSE(fs::exists(dir / "out.png"));
}

// A 212-byte little-endian BigTIFF declaring width x height 8-bit gray pixels in one strip (its sizes as LONG8), with
// no pixel data.
std::string bigtiff_claiming(std::uint64_t width, std::uint64_t height) {
  const auto le = [](std::uint64_t v, int size) {
    std::string out;
    for (int i = 0; i < size; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
    return out;
  };
  const std::pair<unsigned, std::pair<unsigned, std::uint64_t>> entries[] = {
      {256, {16, width}}, {257, {16, height}}, {258, {3, 8}},     {259, {3, 1}},     {262, {3, 1}},
      {273, {16, 300}},   {277, {3, 1}},       {278, {16, height}}, {279, {16, width * height}}};
  std::string tiff = std::string("II\x2b\x00\x08\x00\x00\x00", 8) + le(16, 8) + le(std::size(entries), 8);
  for (const auto& [tag, value] : entries) tiff += le(tag, 2) + le(value.first, 2) + le(1, 8) + le(value.second, 8);
  return tiff + le(0, 8);
}

TEST(Hostile, BigTiffDeclaringAGigapixelIsRefusedFromItsHeader) {
  // 32768 x 32768 = 2^30 pixels in LONG8 fields: the header probe read them halved (16384 x 16384, exactly
  // max_pixels), so `rsz info` decoded a gigabyte of pixels before failing on something else. Under a 1 GiB
  // address-space limit only a refusal from the header passes.
  ScratchDir dir("bigtiff");
  test::write_file(dir / "giga.tif", bigtiff_claiming(32768, 32768));
  for (const char* args : {"info giga.tif", "resample -i giga.tif -o out.png --scale 0.01"}) {
    const auto r = run_limited(dir, args, 1L << 20);
    expect_refused(r, 1, "giga.tif: the image is 32768 x 32768 pixels, more than --max-pixels (268435456)", args);
  }
  EXPECT_FALSE(fs::exists(dir / "out.png"));
}

TEST(Hostile, HugeRequestedOutputsAreUsageErrorsBeforeAllocating) {
  ScratchDir dir("hugeout");
  test::write_file(dir / "sizes.json", "{\"output_sizes\": [1, 3, 100000, 100000]}");
  io::write_npy(dir / "x.npy", Tensor(DataType::Float32, {1, 2, 8, 8}).view());
  test::write_file(dir / "r.json", "{\"rois\": [[0, 0, 10, 10]]}");
  const std::string img = photo("chelsea.png");
  const struct {
    std::string args;
    const char* needle;
  } cases[] = {
      {"resample -i " + img + " -o big.png --scale 100", "--max-pixels"},  // "100%" meant as 100x
      {"resample -i " + img + " -o big.png --size 1000000x1000000", "--max-pixels"},
      {"resample -i " + img + " -o big.png --scale 100000", "--max-pixels"},
      {"resample -i " + img + " -o big.png --scale 1e30", "scales"},
      {"resample -i " + img + " -o big.png --config sizes.json", "output"},
      {"resample -i x.npy -o big.npy --scales 1,1,20000,20000", "memory budget"},
      {"upsample -i " + img + " -o big.png --factor 40000", "--max-pixels"},
      {"upsample -i x.npy -o big.npy --factor 40000", "memory budget"},
      {"roi-align -i " + img + " --rois r.json --output-size 100000x100000 -o big.npy", "memory budget"},
      {"roi-align -i " + img + " --rois r.json --output-size 100000x100000 -o big/", "--max-pixels"},
  };
  for (const auto& c : cases) expect_refused(run_limited(dir, c.args), 2, c.needle, c.args);
  EXPECT_FALSE(fs::exists(dir / "big.png"));
  EXPECT_FALSE(fs::exists(dir / "big.npy"));
  EXPECT_FALSE(fs::exists(dir / "big"));
}

TEST(Hostile, ManyRoisAreBoundedByTheMemoryBudget) {
  ScratchDir dir("manyrois");
  {
    std::ofstream f(dir / "many.json");
    f << "{\"rois\": [";
    for (int i = 0; i < 300000; ++i) f << (i ? "," : "") << "[0,0,8,8]";
    f << "]}";
  }
  expect_refused(run_limited(dir, "roi-align -i " + photo("chelsea.png") +
                                      " --rois many.json --output-size 2x2 -o out.npy --max-memory 64M"),
                 2, "memory budget", "300000 ROIs in 64 MiB");
  const auto r = run_limited(dir, "roi-align -q -i " + photo("chelsea.png") +
                                      " --rois many.json --output-size 2x2 -o out.npy --samples 1");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(io::read_npy(dir / "out.npy").size(0), 300000);
}

// Standard input is copied to a scratch file as it comes, never held whole: a stream whose first bytes are no image
// is refused at once (an endless `yes` ends), and one larger than the memory budget is read no further and fails
// alone (exit 1, as an input over the budget does), the other inputs still written. Under a 256 MiB address-space
// limit: rsz read the whole stream into memory first (bad_alloc for `yes | head -c 300000000`).
TEST(Hostile, StandardInputIsSniffedAndReadWithinTheBudget) {
  ScratchDir dir("stdin_budget");
  const std::string limit = kAddressSanitizer || kEmulated ? "" : "ulimit -v 262144; ";
  const std::string rsz = "timeout -k 10 60 '" + std::string(RSZ_BINARY) + "'";
  auto r = run_shell(dir, limit + "yes | " + rsz + " resample -i - -o y.png --scale 0.5");
  expect_refused(r, 2, "", "yes");
  EXPECT_EQ(r.err,
            "rsz: -i -: standard input is not a PNG, JPEG, BMP, TIFF, WebP, PPM/PGM, GIF, HEIC, AVIF or JPEG XL image or a "
            ".npy tensor (or is empty); give --format\n");
  EXPECT_FALSE(fs::exists(dir / "y.png"));
  // A PNG's first bytes, then zeros without end: read up to the budget, then failed alone.
  r = run_shell(dir, limit + "(cat " + photo("chelsea.png") + "; cat /dev/zero) | " + rsz + " resample -i - -i " +
                         photo("camera.png") + " -o out/ --scale 0.5 --max-memory 64M");
  expect_refused(r, 1, "", "endless PNG stream");
  EXPECT_EQ(r.err,
            "rsz: standard input (-i -): the stream is larger than the memory budget of 64.0 MiB (rsz stopped "
            "reading it there); raise --max-memory to read it\nrsz: 1 of 2 inputs failed; 1 file written\n");
  EXPECT_EQ(list_files(dir.path() / "out"), std::vector<std::string>{"camera.png"});
  // Within the budget the same stream is an image like its file.
  r = run_shell(dir, limit + "cat " + photo("chelsea.png") + " | " + rsz + " resample -q -i - -o s.png --scale 0.5");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(io::read_image_info(dir / "s.png").width, 225);
}

// An image file is never read whole beyond the memory budget: a PNG is read as libpng decodes it (300 MB of zeros
// after its IEND are not read: it decodes under a 256 MiB address-space limit, the same bytes as without them); a
// format whose decoder takes the whole file (JPEG, TIFF, ...) is refused when the file does not fit the budget,
// failing alone with --max-memory named. rsz read every file whole: 560 MB for the PNG with --max-memory 64M.
TEST(Hostile, ImageFilesAreReadWithinTheBudget) {
  ScratchDir dir("file_budget");
  const std::string limit = kAddressSanitizer || kEmulated ? "" : "ulimit -v 262144; ";
  const std::string rsz = "timeout -k 10 60 '" + std::string(RSZ_BINARY) + "'";
  ASSERT_EQ(run_rsz(dir, "resample -q -i " + photo("camera.png") + " -o plain.png --scale 0.5").status, 0);
  ASSERT_EQ(run_rsz(dir, "resample -q -i " + photo("chelsea.png") + " -o small.tif --scale 0.5").status, 0);
  for (const std::string& name : {std::string("camera.png"), std::string("rocket.jpg")}) {
    fs::copy_file(photo(name), dir.path() / ("tail_" + name));
  }
  fs::copy_file(dir.path() / "small.tif", dir.path() / "tail_small.tif");
  for (const char* name : {"tail_camera.png", "tail_rocket.jpg", "tail_small.tif"}) {  // sparse: no disk used
    fs::resize_file(dir.path() / name, fs::file_size(dir.path() / name) + 300000000);
  }
  auto r = run_shell(dir, limit + rsz + " resample -q -i tail_camera.png -o png_out.png --scale 0.5 --max-memory 64M");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(test::read_file(dir / "png_out.png"), test::read_file(dir / "plain.png"));
  r = run_shell(dir, limit + rsz + " resample -i tail_rocket.jpg -i tail_small.tif -i " + photo("chelsea.png") +
                         " -o out/ --scale 0.5 --max-memory 64M");
  expect_refused(r, 1, "", "whole-file decoders");
  EXPECT_NE(r.err.find("rsz: tail_rocket.jpg: reading this {1, 3, 427, 640} input needs about 287.0 MiB (its "
                       "286.2 MiB file and 800.6 KiB of decoded rows), over the memory budget of 64.0 MiB (--max-memory)\n"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("rsz: tail_small.tif: the file is " + std::to_string(fs::file_size(dir / "tail_small.tif")) +
                       " bytes, more than the memory budget (--max-memory, 67108864) for a TIFF file, which is "
                       "decoded whole in memory\n"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("rsz: 2 of 3 inputs failed; 1 file written\n"), std::string::npos) << r.err;
  EXPECT_EQ(list_files(dir.path() / "out"), std::vector<std::string>{"chelsea.png"});
}

// Every file of a VOC or YOLO annotation folder is held to the memory budget as a single annotation file is, before
// it is read: a 4 MB VOC .xml or YOLO .txt in a folder was parsed whatever --max-memory said (a 30 MB .xml peaked
// at 380 MiB under --max-memory 128M).
TEST(Hostile, AnnotationFolderFilesAreHeldToTheBudget) {
  ScratchDir dir("annotation_budget");
  fs::create_directories(dir.path() / "voc");
  fs::create_directories(dir.path() / "yolo");
  test::write_file(dir / "voc/a.xml",
                   "<annotation><filename>chelsea.png</filename><object><name>eye</name><bndbox><xmin>1</xmin>"
                   "<ymin>1</ymin><xmax>9</xmax><ymax>9</ymax></bndbox></object></annotation>");
  test::write_file(dir / "yolo/chelsea.txt", "0 0.5 0.5 0.1 0.1\n");
  std::string objects = "<annotation><filename>coffee.png</filename>";
  std::string labels;
  while (objects.size() < (std::size_t{4} << 20)) {
    objects += "<object><name>cup</name><bndbox><xmin>1</xmin><ymin>1</ymin><xmax>5</xmax><ymax>5</ymax></bndbox>"
               "</object>\n";
    labels += "0 0.5 0.5 0.1 0.1\n";
  }
  test::write_file(dir / "voc/b.xml", objects + "</annotation>\n");
  while (labels.size() < (std::size_t{4} << 20)) labels += "0 0.5 0.5 0.1 0.1\n";
  test::write_file(dir / "yolo/coffee.txt", labels);
  const std::string photos = std::string(RSZ_SOURCE_DIR) + "/samples/photos";
  auto r = run_limited(dir, "roi-align --rois voc --image-root " + photos +
                                " --output-size 8x8 -o crops/ --max-memory 64M", 256L << 10);
  expect_refused(r, 2, "", "VOC folder");
  EXPECT_EQ(r.err, "rsz: --rois voc/b.xml: a 4.00 MiB XML file needs about 160.0 MiB to read, over the memory budget "
                   "of 64.0 MiB (--max-memory)\n");
  r = run_limited(dir, "roi-align -i " + photos + "/chelsea.png -i " + photos +
                           "/coffee.png --rois yolo --output-size 8x8 -o crops/ --max-memory 64M", 256L << 10);
  expect_refused(r, 2, "", "YOLO folder");
  EXPECT_EQ(r.err.rfind("rsz: --rois yolo/coffee.txt: a 4.00 MiB text file needs about 160.", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(", over the memory budget of 64.0 MiB (--max-memory)\n"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "crops"));
  // Within the budget the folder is read (--dry-run: the 4 MB file holds some 35,000 boxes).
  r = run_limited(dir, "roi-align -q --rois voc --image-root " + photos +
                           " --output-size 8x8 -o voc_crops/ --max-memory 192M --dry-run", 512L << 10);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.rfind(photos + "/chelsea.png -> voc_crops/chelsea_0.png\n", 0), 0u) << r.out.substr(0, 200);
}

// Budget holes: a progressive JPEG's coefficient buffer (libjpeg keeps it at full size even under --shrink-on-load),
// a 15 MB ICC profile carried by a 30 x 20 JPEG (copied by decoder, images and encoder), and a data.yaml of half a
// million names (yaml-cpp's nodes): each is counted, so a run under --max-memory is refused before it reads, and a run
// within a budget stays inside it.
TEST(Hostile, DecoderBuffersMetadataAndYamlNodesAreInsideTheBudget) {
  ScratchDir dir("budget-holes");
  const auto made = test::run_shell(dir, "/usr/bin/python3 -c \"\nimport numpy as np\nfrom PIL import Image\n"
      "a = np.random.default_rng(0).integers(0, 256, (3000, 4000, 3)).astype(np.uint8)\n"
      "Image.fromarray(a).save('prog.jpg', progressive=True, quality=80)\n"
      "b = np.random.default_rng(1).integers(0, 256, (20, 30, 3)).astype(np.uint8)\n"
      "Image.fromarray(b).save('icc.jpg', icc_profile=bytes([1]) * (15 << 20))\n"
      "open('data.yaml', 'w').write('names:\\n' + '  - a\\n' * 500000)\n\"");
  ASSERT_EQ(made.status, 0) << made.err;
  auto r = run_rsz(dir, "thumbnail -i prog.jpg --size 256 --shrink-on-load -o p.png --max-memory 16M");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("of progressive JPEG coefficients, over the memory budget of 16.0 MiB"), std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(dir.path() / "p.png"));
  const long prog_peak = test::rsz_usage(dir, "thumbnail -i prog.jpg --size 256 --shrink-on-load -o p.png --max-memory 100M -q",
                                         "ru_maxrss");
  EXPECT_GT(prog_peak, 0);
  EXPECT_LT(prog_peak, 100 * 1024);
  r = run_rsz(dir, "thumbnail -i icc.jpg --size 16 -o i.jpg --max-memory 64M");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("copies of its 15.0 MiB of metadata (EXIF, ICC, XMP)"), std::string::npos) << r.err;
  const long icc_peak = test::rsz_usage(dir, "thumbnail -i icc.jpg --size 16 -o i.jpg --max-memory 160M -q", "ru_maxrss");
  EXPECT_GT(icc_peak, 0);
  EXPECT_LT(icc_peak, 160 * 1024);
  fs::create_directories(dir.path() / "labels");
  test::write_file(dir / "labels/chelsea.txt", "0 0.5 0.5 0.2 0.2\n");
  r = run_rsz(dir, "roi-align -i " + photo("chelsea.png") + " --rois labels --names data.yaml --output-size 4x4 -o r/ "
                   "--max-memory 128M");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--names data.yaml: a 2.86 MiB YAML file needs about"), std::string::npos) << r.err;
}

// ---- signals ----

// Starts rsz with `args` in `dir` (stdout and stderr to files), returning its pid.
pid_t spawn_rsz(const ScratchDir& dir, const std::vector<std::string>& args) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    // A test runner started in the background may ignore SIGINT; rsz keeps ignored signals ignored, so reset them.
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
    if (::chdir(dir.path().c_str()) != 0) ::_exit(127);
    std::FILE* out = std::freopen(".stdout", "w", stdout);
    std::FILE* err = std::freopen(".stderr", "w", stderr);
    if (out == nullptr || err == nullptr) ::_exit(127);
    std::vector<char*> argv{const_cast<char*>(RSZ_BINARY)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(RSZ_BINARY, argv.data());
    ::_exit(127);
  }
  return pid;
}

bool has_temporary(const fs::path& root) {
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (it->path().filename().string().find(".tmp-") != std::string::npos) return true;
  }
  return false;
}

TEST(Hostile, SignalsRemoveTemporariesAndExit128PlusSignal) {
  // Large .npy outputs (up to 184 MB each) keep a temporary file open for a while when the signal comes.
  for (const int sig : {SIGINT, SIGTERM}) {
    // The signal must arrive while rsz runs: an attempt in which rsz had already finished (a loaded machine can
    // delay the poll past the last output) is repeated, up to 5 times.
    bool delivered = false;
    for (int attempt = 0; attempt < 5 && !delivered; ++attempt) {
      ScratchDir dir("signal");
      const pid_t pid = spawn_rsz(dir, {"upsample", "-i", photo("coffee.png"), "-i", photo("chelsea.png"), "-i",
                                        photo("camera.png"), "-i", photo("rocket.jpg"), "-o", "out/{stem}.npy",
                                        "--factor", "8", "-j", "1"});
      ASSERT_GT(pid, 0);
      bool seen = false;
      for (int i = 0; i < 600000 && !seen; ++i) {  // waits for the first temporary file; no time is asserted
        seen = has_temporary(dir.path() / "out");
        if (!seen) std::this_thread::sleep_for(std::chrono::microseconds(200));
      }
      ::kill(pid, sig);
      int raw = 0;
      ASSERT_EQ(::waitpid(pid, &raw, 0), pid);
      ASSERT_TRUE(WIFEXITED(raw)) << "killed by signal " << WTERMSIG(raw);
      if (!seen || WEXITSTATUS(raw) == 0) continue;  // finished before the signal came
      delivered = true;
      EXPECT_EQ(WEXITSTATUS(raw), 128 + sig);
      EXPECT_FALSE(has_temporary(dir.path() / "out")) << "signal " << sig;
      const std::string err = test::read_text(dir.path() / ".stderr");
      EXPECT_NE(err.find(sig == SIGINT ? "rsz: interrupted" : "rsz: terminated"), std::string::npos) << err;
    }
    EXPECT_TRUE(delivered) << "rsz finished before signal " << sig << " in every attempt";
  }
  // SIGPIPE: the reader of --json goes away after the first output; rsz stops there, exit 141.
  ScratchDir dir("sigpipe");
  const auto r = run_shell(dir, "{ '" + std::string(RSZ_BINARY) + "' upsample -i " + photo("coffee.png") + " -i " +
                                    photo("chelsea.png") + " -o 'out/{stem}.npy' --factor 8 -j 1 --json; "
                                    "echo $? > status; } | head -c 0");
  EXPECT_EQ(test::read_text(dir.path() / "status"), "141\n") << r.err;
  EXPECT_FALSE(has_temporary(dir.path() / "out"));
}

// A signal that comes while several threads create and finish many outputs at once leaves no temporary file, whatever
// the moment: the creation of a temporary and its registration for the handler are one step (io's file_util.cpp).
// Tried at 30 moments spread over the run (a half-written temporary survived about one run in five before).
TEST(Hostile, SignalAtAnyMomentOfManyWritersLeavesNoTemporary) {
  ScratchDir inputs("signal_many_inputs");
  fs::create_directories(inputs.path() / "in");
  for (int i = 0; i < 60; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "in/img%03d.png", i);
    fs::copy_file(photo("coffee.png"), inputs.path() / name);
  }
  int interrupted = 0;
  for (int attempt = 0; attempt < 30; ++attempt) {
    ScratchDir dir("signal_many");
    const pid_t pid = spawn_rsz(dir, {"upsample", "-i", (inputs.path() / "in").string(), "-o", "out/{stem}.npy",
                                      "--factor", "2", "-j", "4", "--no-sync"});
    ASSERT_GT(pid, 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(5 + 20 * attempt));
    ::kill(pid, SIGINT);
    int raw = 0;
    ASSERT_EQ(::waitpid(pid, &raw, 0), pid);
    // A signal that comes before rsz has set its handlers (a loaded machine starting the process) ends it by default;
    // it has written nothing then. Any other end is rsz's: 0 (finished first) or 128 + SIGINT.
    if (WIFSIGNALED(raw)) {
      EXPECT_EQ(WTERMSIG(raw), SIGINT);
      EXPECT_FALSE(fs::exists(dir.path() / "out")) << "attempt " << attempt;
      continue;
    }
    if (WEXITSTATUS(raw) == 128 + SIGINT) ++interrupted;
    EXPECT_FALSE(has_temporary(dir.path())) << "attempt " << attempt << ", exit " << WEXITSTATUS(raw);
  }
  EXPECT_GT(interrupted, 5);  // the signal came while rsz was writing in most attempts
}

// ---- paths ----

TEST(Hostile, OutputsStayInsideTheirFolderAndNeverReplaceAnInput) {
  ScratchDir dir("paths");
  fs::create_directories(dir.path() / "work");
  test::write_file(dir / "work/escape.json",
                   "{\"inputs\": [\"" + photo("chelsea.png") +
                       "\"], \"output_dir\": \"out\", \"steps\": [{\"op\": \"resample\", \"config\": "
                       "{\"scales\": [1, 1, 0.5, 0.5]}, \"output\": \"../../x_{stem}.png\"}]}");
  expect_refused(run_rsz(dir, "run work/escape.json"), 2, "..", "template climbing out of output_dir");
  EXPECT_FALSE(fs::exists(dir / "x_chelsea.png"));

  test::write_file(dir / "r.json", "{\"rois\": [[0, 0, 10, 10]]}");
  test::write_file(dir / "c.json", "{\"scales\": [1, 1, 0.5, 0.5]}");
  io::write_npy(dir / "x.npy", Tensor(DataType::Float32, {1, 1, 8, 8}).view());
  io::write_npy(dir / "r.npy", test::make_f32({1, 4}, {0, 0, 4, 4}).view());
  io::write_npy(dir / "b.npy", test::make_u32({1}, {0}).view());
  const std::string rois_before = test::read_file(dir / "r.json");
  const std::string config_before = test::read_file(dir / "c.json");
  const std::string bi_before = test::read_file(dir / "b.npy");
  expect_refused(run_rsz(dir, "roi-align -i " + photo("chelsea.png") + " --rois r.json --output-size 2x2 -o r.json"),
                 2, "overwrite an input", "-o = --rois");
  expect_refused(run_rsz(dir, "resample -i " + photo("chelsea.png") + " --config c.json -o c.json"), 2,
                 "overwrite an input", "-o = --config");
  expect_refused(
      run_rsz(dir, "roi-align -i x.npy --rois r.npy --batch-indices b.npy --output-size 2x2 -o b.npy"), 2,
      "overwrite an input", "-o = --batch-indices");
  EXPECT_EQ(test::read_file(dir / "r.json"), rois_before);
  EXPECT_EQ(test::read_file(dir / "c.json"), config_before);
  EXPECT_EQ(test::read_file(dir / "b.npy"), bi_before);

  // The same input however the output names it: through a link to it, a linked folder, "./" or "sub/..", a folder
  // to be made followed by ".." (the kernel resolves the rest through the link once it is made), and an existing
  // folder as the output's name.
  fs::create_directories(dir.path() / "in/sub/a");
  fs::copy_file(photo("chelsea.png"), dir.path() / "in/a.png");
  const std::string input_before = test::read_file(dir / "in/a.png");
  fs::create_symlink("in/a.png", dir.path() / "link.png");
  fs::create_directory_symlink("in", dir.path() / "linked");
  for (const char* out : {"link.png", "linked/a.png", "./in/a.png", "in/sub/../a.png", "linked/sub/../a.png",
                          "new/../linked/a.png", "new/x/../../link.png"}) {
    expect_refused(run_rsz(dir, "resample -i in/a.png --scale 0.5 -o " + std::string(out)), 2, "overwrite an input",
                   out);
  }
  expect_refused(run_rsz(dir, "resample -i in/a.png --scale 0.5 -o 'in/sub/{stem}'"), 2, "an existing folder",
                 "-o folder");
  EXPECT_EQ(test::read_file(dir / "in/a.png"), input_before);
  EXPECT_TRUE(fs::is_symlink(dir.path() / "link.png"));
  EXPECT_FALSE(fs::exists(dir.path() / "new"));

  // A 244-byte file name is legal on common file systems; the temporary name must fit too.
  const std::string long_name = std::string(240, 'n') + ".png";
  const auto r = run_rsz(dir, "resample -q -i " + photo("chelsea.png") + " -o " + long_name + " --scale 0.5");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(fs::exists(dir.path() / long_name));
  expect_no_temporaries(dir.path(), "long name");
}

// Inputs that an output names otherwise than by their name: a --plan shard's own manifest, a .tar part, an image
// that -i lists but no annotation crops, another shard's input, a link that a folder made by the run brings to
// life, standard input and standard output redirected from and into an input. Each is refused (before anything is
// written, or where the output would be renamed over the input), and the input keeps its bytes; an output that is
// another hard link to an input's data may be replaced (the input keeps its name and bytes).
TEST(Hostile, InputsAreNeverReplacedHoweverTheOutputNamesThem) {
  ScratchDir dir("replace");
  const std::string rsz = "timeout -k 10 60 '" + std::string(RSZ_BINARY) + "' ";
  const std::string rois = std::string(RSZ_SOURCE_DIR) + "/samples/rois/chelsea_eyes.json";
  const auto kept = [&](const std::string& file, const std::string& before, const std::string& context) {
    EXPECT_EQ(test::read_file(dir / file), before) << context << ": " << file << " was replaced";
  };
  fs::create_directories(dir.path() / "in");
  fs::copy_file(photo("chelsea.png"), dir.path() / "in/a.png");
  fs::copy_file(photo("coffee.png"), dir.path() / "in/a0.png");
  const std::string a = test::read_file(dir / "in/a.png");
  const std::string a0 = test::read_file(dir / "in/a0.png");

  // --plan: the shard's manifest is m.00000.jsonl, here the --rois file; another shard's input, a crop's name.
  fs::copy_file(rois, dir.path() / "m.00000.jsonl");
  const std::string rois_before = test::read_file(dir / "m.00000.jsonl");
  ASSERT_EQ(run_rsz(dir, "plan -q -i in/a.png --shards 1 -o one").status, 0);
  expect_refused(run_rsz(dir, "roi-align --plan one --shard 0 --rois m.00000.jsonl --output-size 8x8 "
                              "-o 'c/{stem}_{index}.png' --manifest m.jsonl"),
                 2, "m.00000.jsonl: the output would overwrite an input", "a shard's manifest");
  kept("m.00000.jsonl", rois_before, "a shard's manifest");
  ASSERT_EQ(run_rsz(dir, "plan -q -i in --shards 5 -o five").status, 0);
  int refused = 0;
  for (int shard = 0; shard < 5; ++shard) {
    const auto r = run_rsz(dir, "roi-align --plan five --shard " + std::to_string(shard) + " --rois " + rois +
                                    " --output-size 8x8 -o 'in/{stem}{index}.png'");
    if (r.err.find("no input given") != std::string::npos) continue;  // a shard without inputs
    if (r.status == 0) continue;  // a0.png's shard: its crops are in/a00.png, ...
    expect_refused(r, 2, "in/a0.png: the output would overwrite an input", "another shard's input");
    ++refused;
  }
  EXPECT_EQ(refused, 1);
  kept("in/a0.png", a0, "another shard's input");

  // A .tar part named as the --config file.
  fs::create_directories(dir.path() / "x");
  test::write_file(dir / "x/00000-000000.tar", "{\"scales\": [1, 1, 0.5, 0.5]}");
  expect_refused(run_rsz(dir, "resample -i in --config x/00000-000000.tar -o 'x/{shard}-{part}.tar'"), 2,
                 "x/00000-000000.tar: the output would overwrite an input", "a .tar part");
  kept("x/00000-000000.tar", "{\"scales\": [1, 1, 0.5, 0.5]}", "a .tar part");

  // YOLO: -i lists in/a0.png, which has no label file; chelsea's first crop would be named a0.png... by {id}.
  fs::create_directories(dir.path() / "yolo");
  fs::create_directories(dir.path() / "y");
  fs::copy_file(photo("chelsea.png"), dir.path() / "y/chelsea.png");
  fs::copy_file(photo("coffee.png"), dir.path() / "y/chelsea-0.png");
  fs::copy_file(std::string(RSZ_SOURCE_DIR) + "/samples/annotations/yolo/chelsea.txt", dir.path() / "yolo/chelsea.txt");
  const std::string unlabelled = test::read_file(dir / "y/chelsea-0.png");
  expect_refused(run_rsz(dir, "roi-align -i y --rois yolo --output-size 8x8 -o 'y/{id}.png'"), 2,
                 "y/chelsea-0.png: the output would overwrite an input", "an image without labels");
  kept("y/chelsea-0.png", unlabelled, "an image without labels");

  // Lb -> La/../in comes to life when the first job makes La/: the second job's Lb/a.png is in/a.png.
  fs::create_symlink("La/../in", dir.path() / "Lb");
  fs::copy_file(photo("coffee.png"), dir.path() / "b.png");
  auto r = run_rsz(dir, "resample -i in/a.png -i b.png -o 'L{stem}/a.png' --scale 0.5 -j 1");
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("Lb/a.png: not written: it is an input of the run"), std::string::npos) << r.err;
  kept("in/a.png", a, "a link brought to life");
  kept("in/a0.png", a0, "a link brought to life");

  // Standard input from an output's file; standard output into an input.
  fs::copy_file(photo("chelsea.png"), dir.path() / "s.png");
  const std::string s_before = test::read_file(dir / "s.png");
  r = run_shell(dir, rsz + "resample -i - -o s.png --scale 0.5 < s.png");
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("s.png: not written: it is an input of the run"), std::string::npos) << r.err;
  kept("s.png", s_before, "standard input");
  r = run_shell(dir, rsz + "resample -i s.png -o - --scale 0.5 >> s.png");
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("-o -: standard output is redirected into s.png, which the run reads"), std::string::npos)
      << r.err;
  kept("s.png", s_before, "standard output");

  // A manifest whose folder cannot be made fails before any crop is written.
  test::write_file(dir / "f", "a file");
  expect_refused(run_rsz(dir, "roi-align -i in/a.png --rois " + rois + " --output-size 8x8 -o 'mc/{index}.png' "
                              "--manifest f/sub/m.jsonl"),
                 2, "--manifest f/sub/m.jsonl: f is a file, not a folder", "a manifest's folder");
  EXPECT_FALSE(fs::exists(dir.path() / "mc"));

  // Another hard link to an input's data: replaced, the input untouched.
  fs::create_directories(dir.path() / "h");
  fs::create_hard_link(dir.path() / "s.png", dir.path() / "h/s.png");
  r = run_rsz(dir, "resample -q -i s.png -o h/s.png --scale 0.5");
  EXPECT_EQ(r.status, 0) << r.err;
  kept("s.png", s_before, "a hard link");
  EXPECT_NE(test::read_file(dir / "h/s.png"), s_before);
  expect_no_temporaries(dir.path(), "inputs named otherwise");
}

// Plans and shards neither lose nor repeat inputs: .tar parts of several shards need {shard} in their name (each
// shard numbers its parts from 0); the manifest rsz merge will write may not be an input; a plan's walk does not
// follow links to folders (a loop, a link to itself); a folder named twice is planned once.
TEST(Hostile, PlansAndShardsNeitherLoseNorRepeatInputs) {
  ScratchDir dir("plans");
  fs::create_directories(dir.path() / "in");
  for (const char* name : {"camera.png", "chelsea.png", "coffee.png"}) fs::copy_file(photo(name), dir.path() / "in" / name);
  ASSERT_EQ(run_rsz(dir, "plan -q -i in --shards 2 -o st").status, 0);
  for (const std::string shard : {"--plan st --shard 0", "-i in --shard 1/2"}) {
    expect_refused(run_rsz(dir, "thumbnail " + shard + " --size 8 -o 'o/{part}.tar'"), 2,
                   "-o o/{part}.tar: each shard writes parts of its own; put {shard} in the name", shard);
  }
  EXPECT_FALSE(fs::exists(dir.path() / "o"));
  EXPECT_EQ(run_rsz(dir, "thumbnail -q -i in --shard 0/1 --size 8 -o 'one/{part}.tar'").status, 0);

  // The shard's own manifest is boxes.00000.jsonl; rsz merge would write boxes.jsonl, the --rois file.
  fs::copy_file(std::string(RSZ_SOURCE_DIR) + "/samples/annotations/coco.json", dir.path() / "boxes.jsonl");
  const std::string boxes = test::read_file(dir / "boxes.jsonl");
  fs::create_directories(dir.path() / "photos");
  for (const auto& entry : fs::directory_iterator(std::string(RSZ_SOURCE_DIR) + "/samples/photos")) {
    fs::copy_file(entry.path(), dir.path() / "photos" / entry.path().filename());
  }
  ASSERT_EQ(run_rsz(dir, "plan -q -i photos --shards 2 -o pst").status, 0);
  expect_refused(run_rsz(dir, "roi-align --plan pst --shard 0 --rois boxes.jsonl --image-root photos "
                              "--output-size 8x8 -o 'c/{id}.png' --manifest boxes.jsonl"),
                 2, "boxes.jsonl: the output would overwrite an input", "the merged manifest");
  EXPECT_EQ(test::read_file(dir / "boxes.jsonl"), boxes);

  // Links to folders inside a planned tree: not followed (the walk ended before; the loop never did).
  fs::create_directory_symlink("..", dir.path() / "in/loop");
  fs::create_directory_symlink(".", dir.path() / "in/self");
  auto r = run_shell(dir, "timeout -k 5 30 '" + std::string(RSZ_BINARY) + "' plan -q -i in -r --shards 2 -o lst");
  ASSERT_EQ(r.status, 0) << r.err;
  std::size_t listed = 0;
  for (const auto& entry : fs::directory_iterator(dir.path() / "lst/shards")) {
    const std::string list = test::read_file(entry.path().string());
    listed += static_cast<std::size_t>(std::count(list.begin(), list.end(), '\n'));
  }
  EXPECT_EQ(listed, 3u);

  // A folder named twice (and a file of it): each input planned once.
  r = run_rsz(dir, "plan -q -i in -i ./in -i in/camera.png --shards 2 -o twice");
  ASSERT_EQ(r.status, 0) << r.err;
  listed = 0;
  for (const auto& entry : fs::directory_iterator(dir.path() / "twice/shards")) {
    const std::string list = test::read_file(entry.path().string());
    listed += static_cast<std::size_t>(std::count(list.begin(), list.end(), '\n'));
  }
  EXPECT_EQ(listed, 3u);
}

// A truncated COCO file is not recognized as COCO: what is wrong with it is said before the flags that go with
// COCO only (it was "--image-root ...: only for COCO and Pascal VOC annotations").
TEST(Hostile, ADamagedCocoFileIsNamedBeforeItsFlags) {
  ScratchDir dir("coco-damaged");
  test::write_file(dir / "trunc.json",
                   test::read_file(std::string(RSZ_SOURCE_DIR) + "/samples/annotations/coco.json").substr(0, 300));
  const std::string image_root = "--image-root " + std::string(RSZ_SOURCE_DIR) + "/samples/photos";
  for (const std::string& flag : {image_root, std::string("--skip-crowd")}) {
    expect_refused(run_rsz(dir, "roi-align --rois trunc.json --output-size 8x8 -o 'c/{id}.png' " + flag), 2,
                   "rsz: trunc.json: invalid JSON at line ", flag);
  }
  EXPECT_FALSE(fs::exists(dir.path() / "c"));
}

TEST(Hostile, HostileFileNamesCannotForgeMessagesOrBreakJson) {
  ScratchDir dir("names");
  const std::string newline_name = "evil\nrsz: wrote 1 file.png";
  test::write_file(dir / newline_name, "not an image");
  const auto r = run_rsz(dir, "resample -i \"$(printf 'evil\\nrsz: wrote 1 file.png')\" -o out.png --scale 0.5");
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("evil\\nrsz: wrote 1 file.png"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 2) << r.err;  // the failure and the summary

  const std::string latin1 = std::string("caf\xe9") + ".png";
  fs::copy_file(photo("chelsea.png"), dir.path() / latin1);
  const auto j = run_rsz(dir, "resample -q -i \"$(printf 'caf\\351.png')\" -o out/ --scale 0.5 --json");
  ASSERT_EQ(j.status, 0) << j.err;
  const auto record = nlohmann::json::parse(j.out);  // valid JSON (the name's byte is replaced)
  EXPECT_EQ(record["op"], "resample");
  EXPECT_TRUE(fs::exists(dir.path() / "out" / latin1));
}

TEST(Hostile, ReadOnlyFormatsGetPngOutputs) {
  ScratchDir dir("pbm");
  test::write_file(dir / "bits.pbm", "P1\n4 2\n1 0 1 0\n0 1 0 1\n");
  const auto r = run_rsz(dir, "resample -q -i bits.pbm -o out/ --scale 2");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(list_files(dir.path() / "out"), std::vector<std::string>{"bits.png"});
}

// ---- exit status and usage errors found before any work ----

TEST(Hostile, OneMissingInputFailsAloneInEveryPath) {
  ScratchDir dir("missing");
  const std::string a = photo("chelsea.png");
  const std::string b = photo("camera.png");
  const auto r = run_rsz(dir, "resample -i " + a + " -i missing.png -i 'nothing*.png' -i " + b +
                                  " -o out/ --scale 0.5");
  expect_refused(r, 1, "missing.png: no such file", "-i list");
  EXPECT_NE(r.err.find("nothing*.png: the pattern matches no file"), std::string::npos) << r.err;
  EXPECT_EQ(list_files(dir.path() / "out"), (std::vector<std::string>{"camera.png", "chelsea.png"}));

  test::write_file(dir / "batch.json", "{\"inputs\": [\"" + a + "\", \"missing.png\", \"" + b +
                                           "\"], \"output_dir\": \"bout\", \"steps\": [{\"op\": \"resample\", "
                                           "\"config\": {\"scales\": [1, 1, 0.5, 0.5]}, \"output\": \"{stem}.png\"}]}");
  const auto batch = run_rsz(dir, "run batch.json --json");
  EXPECT_EQ(batch.status, 1) << batch.err;
  EXPECT_EQ(list_files(dir.path() / "bout"), (std::vector<std::string>{"camera.png", "chelsea.png"}));
  // One JSON record per output and per failure, with the real operator.
  std::istringstream lines(batch.out);
  std::string line;
  int outputs = 0;
  int failures = 0;
  while (std::getline(lines, line)) {
    const auto j = nlohmann::json::parse(line);
    EXPECT_EQ(j["op"], "resample") << line;
    if (j.contains("error")) {
      ++failures;
      EXPECT_NE(j["error"].get<std::string>().find("no such file"), std::string::npos) << line;
    } else {
      ++outputs;
    }
  }
  EXPECT_EQ(outputs, 2);
  EXPECT_EQ(failures, 1);
}

TEST(Hostile, OutputProblemsAreUsageErrorsWithNothingCreated) {
  ScratchDir dir("usage");
  io::Image deep;
  deep.width = deep.height = 4;
  deep.channels = 3;
  deep.bit_depth = 16;
  deep.data16.assign(48, 1000);
  io::write_image(dir / "deep.png", deep);
  fs::create_directories(dir.path() / "taken.png");
  const std::string a = photo("chelsea.png");
  const std::string b = photo("camera.png");
  const struct {
    std::string args;
    const char* needle;
  } cases[] = {
      {"resample -i " + a + " -i " + b + " -o single.png --scale 0.5", "one file name for 2 inputs"},
      {"resample -i " + a + " -o taken.png --scale 0.5", "existing folder"},
      {"resample -i " + a + " -i " + b + " -o 'out/{stem}.gif' --scale 0.5", "'.gif'"},
      {"resample -i " + a + " -o out/x.xyz --scale 0.5", "'.xyz'"},
      {"resample -i deep.png -o out/x.jpg --scale 0.5 --strict", "16-bit"},
      {"resample -i deep.png -o out/x.jpg --scale 0.5 --dry-run --strict", "8 bits (--depth 8)"},
      {"resample -i " + a + " -o out/x.png --width 0", "whole number >= 1"},
      {"resample -i " + a + " -o out/x.png --scale 0.5 --jobs abc", "whole number from 0 to 4096"},
      {"resample -i " + a + " -o out/x.png --scale 0.5 --max-pixels 0", "whole number >= 1"},
      {"resample -i " + a + " -o out/x.png --scale 0.5 --max-memory lots", "--max-memory"},
  };
  for (const auto& c : cases) {
    const auto r = run_rsz(dir, c.args);
    expect_refused(r, 2, c.needle, c.args);
    EXPECT_LT(r.err.size(), 400u) << c.args << ": " << r.err;
  }
  EXPECT_FALSE(fs::exists(dir / "single.png"));
  EXPECT_FALSE(fs::exists(dir / "out"));
}

// ---- library chatter ----

TEST(Hostile, CorruptFilesAreOneLineFailuresFromRsz) {
  ScratchDir dir("chatter");
  const std::string jpeg = test::read_file(photo("rocket.jpg"));
  test::write_file(dir / "truncated.jpg", jpeg.substr(0, jpeg.size() / 2));
  test::write_file(dir / "broken.bmp", std::string("BM") + std::string(60, '\x7f'));
  test::write_file(dir / "broken.tif", std::string("II\x2a\x00", 4) + std::string(60, '\x01'));
  // A TIFF whose RowsPerStrip (19789) exceeds its height (2): the decoder would allocate 19789 rows (3.2 GB).
  std::string tiff("II\x2a\x00\x08\x00\x00\x00", 8);
  const auto le16 = [](unsigned v) { return std::string{static_cast<char>(v & 0xff), static_cast<char>(v >> 8)}; };
  const auto le32 = [&](unsigned v) { return le16(v & 0xffff) + le16(v >> 16); };
  tiff += le16(3) + le16(256) + le16(4) + le32(1) + le32(40960) + le16(257) + le16(4) + le32(1) + le32(2) + le16(278) +
          le16(4) + le32(1) + le32(19789) + le32(0);
  test::write_file(dir / "strip.tif", tiff);
  for (const char* name : {"truncated.jpg", "broken.bmp", "broken.tif", "strip.tif"}) {
    const auto r = run_rsz(dir, std::string("resample -i ") + name + " -o out/ --scale 0.5 -j 64");
    expect_refused(r, 1, name, name);
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 2) << r.err;  // the failure and the summary
  }
  EXPECT_TRUE(list_files(dir.path() / "out").empty());
}

}  // namespace
}  // namespace rsz
