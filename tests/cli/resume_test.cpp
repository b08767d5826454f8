// Dataset-building conveniences end to end: --skip-existing (resuming an interrupted run), tree placeholders
// ({dir}, {relpath}, {parent}) with -r, positional inputs, chained batch steps, and standard input and output.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "cli/cli_support.h"
#include "rsz/io/image.h"
#include "rsz/io/npy.h"
#include "rsz/io/run_settings.h"
#include "support/test_util.h"

namespace fs = std::filesystem;

namespace rsz {
namespace {

using test::list_files;
using test::run_rsz;
using test::ScratchDir;

using test::photo;

TEST(SkipExisting, KeepsOutputsThatExistAndDoesNotReadTheirInputs) {
  ScratchDir dir("skip-existing");
  fs::create_directories(dir.path() / "in");
  for (const char* name : {"camera.png", "chelsea.png", "coffee.png"}) {
    fs::copy_file(photo(name), dir / ("in/" + std::string(name)));
  }
  auto r = run_rsz(dir, "resample -i in -o out/ --scale 0.25 -q");
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string chelsea = test::read_file(dir / "out/chelsea.png");
  // An interrupted run: one output missing, one replaced by something else; an input now unreadable.
  fs::remove(dir.path() / "out/camera.png");
  test::write_file(dir / "out/coffee.png", "kept as it is");
  test::write_file(dir / "in/coffee.png", "no longer a PNG");
  r = run_rsz(dir, "resample -i in -o out/ --scale 0.25 --skip-existing");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("wrote 1 file"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("skipped 2 inputs whose outputs exist"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::exists(dir.path() / "out/camera.png"));
  EXPECT_EQ(test::read_file(dir / "out/coffee.png"), "kept as it is");  // not read, not rewritten
  EXPECT_EQ(test::read_file(dir / "out/chelsea.png"), chelsea);
  // --json says what was skipped; without the flag every input runs (and the corrupt one fails).
  r = run_rsz(dir, "resample -i in -o out/ --scale 0.25 --skip-existing --json -q");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("\"skipped\":true"), std::string::npos) << r.out;
  r = run_rsz(dir, "resample -i in -o out/ --scale 0.25 -q --json");
  EXPECT_EQ(r.status, 1) << r.err;
  // The failure's line names its kind of failure: a file that is not an image is a format error; a missing one (a
  // folder given with its '/') an i/o error, named as given, not as an output without a name.
  EXPECT_NE(r.out.find("\"code\":\"format\",\"error\":\"in/coffee.png: "), std::string::npos) << r.out;
  r = run_rsz(dir, "resample -i gone/ -o out2/ --scale 0.25 -q --json");
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(r.out, "{\"code\":\"io\",\"error\":\"gone/: no such file or folder\",\"input\":\"gone/\",\"op\":\"resample\"}\n");
  EXPECT_EQ(r.err, "rsz: gone/: no such file or folder\nrsz: 1 of 1 input failed; 0 files written\n");
}

TEST(SkipExisting, AnEmptyFileIsNotAFinishedOutput) {
  // What a power loss can leave of an output written under --no-sync: its input runs again, for files and for the
  // parts of a .tar output.
  ScratchDir dir("skip-empty");
  fs::create_directories(dir.path() / "in");
  for (const char* name : {"camera.png", "chelsea.png"}) fs::copy_file(photo(name), dir / ("in/" + std::string(name)));
  auto r = run_rsz(dir, "resample -i in -o out/ --scale 0.25 -q");
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string camera = test::read_file(dir / "out/camera.png");
  test::write_file(dir / "out/camera.png", "");
  r = run_rsz(dir, "resample -i in -o out/ --scale 0.25 --skip-existing");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("wrote 1 file"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("skipped 1 input whose outputs exist"), std::string::npos) << r.err;
  EXPECT_EQ(test::read_file(dir / "out/camera.png"), camera);
  r = run_rsz(dir, "resample -i in -o 'wds/{part}.tar' --scale 0.25 -q");
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string part = test::read_file(dir / "wds/000000.tar");
  ASSERT_FALSE(part.empty());
  test::write_file(dir / "wds/000000.tar", "");
  r = run_rsz(dir, "resample -i in -o 'wds/{part}.tar' --scale 0.25 --skip-existing");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("wrote 1 .tar part"), std::string::npos) << r.err;
  EXPECT_EQ(test::read_file(dir / "wds/000000.tar"), part);
}

TEST(SkipExisting, AResumedCropRunStillListsEveryCropInTheManifest) {
  ScratchDir dir("skip-crops");
  const std::string dataset = std::string(RSZ_SOURCE_DIR) + "/samples/rois/dataset.json";
  const std::string base = "roi-align --rois " + dataset + " --output-size 16x16 -o 'crops/{id}.png' -q ";
  auto r = run_rsz(dir, base + "--manifest first.csv");
  ASSERT_EQ(r.status, 0) << r.err;
  fs::remove(dir.path() / "crops/coffee-cup.png");  // coffee.png's job must run again, chelsea.png's is skipped
  r = run_rsz(dir, base + "--manifest second.csv --skip-existing");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(list_files(dir.path() / "crops").size(), 5u);
  EXPECT_EQ(test::read_file(dir / "first.csv"), test::read_file(dir / "second.csv"));
}

TEST(SkipExisting, BatchRunsResumeToo) {
  ScratchDir dir("skip-batch");
  test::write_file(dir / "batch.json", "{\"inputs\": [\"" + photo("chelsea.png") + "\", \"" + photo("camera.png") +
                                           "\"], \"output_dir\": \"out\", \"steps\": [{\"op\": \"resample\", "
                                           "\"config\": {\"scales\": [1, 1, 0.5, 0.5]}}]}");
  auto r = run_rsz(dir, "run batch.json -q");
  ASSERT_EQ(r.status, 0) << r.err;
  test::write_file(dir / "out/camera_resample.png", "kept");
  r = run_rsz(dir, "run batch.json --skip-existing");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("skipped 2 inputs"), std::string::npos) << r.err;
  EXPECT_EQ(test::read_file(dir / "out/camera_resample.png"), "kept");
}

TEST(Trees, RelpathDirAndParentMirrorAFolderTree) {
  ScratchDir dir("trees");
  fs::create_directories(dir.path() / "in/cats");
  fs::create_directories(dir.path() / "in/dogs");
  fs::copy_file(photo("chelsea.png"), dir / "in/cats/a.png");  // the same name in two class folders
  fs::copy_file(photo("coffee.png"), dir / "in/dogs/a.png");
  fs::copy_file(photo("camera.png"), dir / "in/top.png");
  auto r = run_rsz(dir, "resample -i in -r -o 'out/{relpath}{ext}' --scale 0.25 -q");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(list_files(dir.path() / "out"), (std::vector<std::string>{"cats/a.png", "dogs/a.png", "top.png"}));
  r = run_rsz(dir, "resample -i in -r -o 'flat/{parent}_{stem}.jpg' --scale 0.25 -q");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(list_files(dir.path() / "flat"), (std::vector<std::string>{"cats_a.jpg", "dogs_a.jpg", "in_top.jpg"}));
  r = run_rsz(dir, "resample -i in -r -o 'dirs/{dir}/{stem}_small.png' --scale 0.25 -q");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(list_files(dir.path() / "dirs"),
            (std::vector<std::string>{"cats/a_small.png", "dogs/a_small.png", "top_small.png"}));
  // Without a tree placeholder the two a.png collide: refused before anything is written.
  r = run_rsz(dir, "resample -i in -r -o 'clash/{stem}.png' --scale 0.25 -q");
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_FALSE(fs::exists(dir.path() / "clash"));
}

TEST(Trees, InputsCanBeGivenAsArguments) {
  ScratchDir dir("positional");
  const auto r =
      run_rsz(dir, "resample " + photo("chelsea.png") + " " + photo("camera.png") + " -o out/ --scale 0.5 -q");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(list_files(dir.path() / "out"), (std::vector<std::string>{"camera.png", "chelsea.png"}));
}

// "**" matches any number of folders ({relpath} follows them); hidden files and folders (macOS's ._x.png beside every
// copied photo, .cache/) are left out of folders and patterns unless --hidden; batch files say "recursive".
TEST(Trees, GlobstarRecursesAndHiddenFilesAreSkipped) {
  ScratchDir dir("globstar");
  for (const char* sub : {"tree/a/b", "tree/.cache"}) fs::create_directories(dir.path() / sub);
  fs::copy_file(photo("camera.png"), dir / "tree/top.png");
  fs::copy_file(photo("camera.png"), dir / "tree/a/b/deep.png");
  fs::copy_file(photo("camera.png"), dir / "tree/.cache/cached.png");
  test::write_file(dir / "tree/a/._deep.png", "Mac OS X resource fork, not a PNG");
  auto r = run_rsz(dir, "resample -i 'tree/**/*.png' -o 'out/{relpath}.png' --scale 0.25 -q");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(list_files(dir.path() / "out"), (std::vector<std::string>{"a/b/deep.png", "top.png"}));
  r = run_rsz(dir, "resample -i tree -r -o folder/ --scale 0.25 -q");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(list_files(dir.path() / "folder"), (std::vector<std::string>{"deep.png", "top.png"}));
  // Asked for: the hidden ones are inputs too (the AppleDouble file then fails alone, exit 1).
  r = run_rsz(dir, "resample -i 'tree/**/*.png' --hidden -o 'hidden/{relpath}.png' --scale 0.25 -q");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("._deep.png"), std::string::npos) << r.err;
  EXPECT_EQ(list_files(dir.path() / "hidden"),
            (std::vector<std::string>{".cache/cached.png", "a/b/deep.png", "top.png"}));
  test::write_file(dir / "tree.json", R"({"inputs": ["tree"], "recursive": true, "output_dir": "batch",
      "steps": [{"op": "thumbnail", "config": {"size": "16"}, "output": "{relpath}.png"}]})");
  r = run_rsz(dir, "run tree.json -q");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(list_files(dir.path() / "batch"), (std::vector<std::string>{"a/b/deep.png", "top.png"}));
}

// A job that fails after writing some of its crops accounts for them: the summary counts them and the manifest and
// --json list them.
TEST(Trees, CropsWrittenBeforeAFailureAreAccounted) {
  ScratchDir dir("partial-crops");
  fs::create_directories(dir.path() / "crops");
  test::write_file(dir / "crops/nose", "a file where the nose crops' folder would go");
  const auto r = run_rsz(dir, "roi-align --rois " + std::string(RSZ_SOURCE_DIR) +
                                  "/samples/rois/dataset.json --output-size 8x8 -o 'crops/{label}/{id}.png' "
                                  "--manifest m.jsonl --json -j 1");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("after 2 of its 3 crops were written"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("1 of 2 inputs failed; 4 files written"), std::string::npos) << r.err;
  const std::string manifest = test::read_text(dir.path() / "m.jsonl");
  EXPECT_NE(manifest.find("crops/eye/chelsea-left-eye.png"), std::string::npos) << manifest;
  EXPECT_NE(manifest.find("crops/eye/chelsea-right-eye.png"), std::string::npos) << manifest;
  EXPECT_EQ(manifest.find("chelsea-nose"), std::string::npos) << manifest;
  EXPECT_NE(r.out.find("\"output\":\"crops/eye/chelsea-right-eye.png\""), std::string::npos) << r.out;
  EXPECT_TRUE(fs::exists(dir.path() / "crops/eye/chelsea-left-eye.png"));
}

// A batch file says what the command line's flags say: dataset annotations with their image folder and a manifest
// for a roi_align step, the output quality and metadata for the run.
TEST(BatchFiles, SayWhatTheFlagsSay) {
  ScratchDir dir("batch-flags");
  const std::string root = RSZ_SOURCE_DIR;
  test::write_file(dir / "job.json",
                   "{\"inputs\": [\"" + photo("rocket.jpg") + "\"], \"output_dir\": \"out\", \"quality\": 40, "
                   "\"strip\": true, \"grayscale\": true, \"exif\": false, \"steps\": [{\"op\": \"thumbnail\", \"config\": {\"size\": \"200\"}, "
                   "\"output\": \"t/{stem}.jpg\"}, {\"op\": \"roi_align\", \"config\": {\"output_height\": 32, "
                   "\"output_width\": 32}, \"rois\": \"" + root + "/samples/annotations/coco.json\", \"image_root\": \"" +
                   root + "/samples/photos\", \"manifest\": \"crops.jsonl\", \"rois_check\": \"error\", \"output\": \"c/{label}/{id}.png\"}]}");
  auto r = run_rsz(dir, "run job.json -q");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto crops = list_files(dir.path() / "out/c");
  ASSERT_FALSE(crops.empty());
  std::size_t lines = 0;
  for (const char ch : test::read_text(dir.path() / "out/crops.jsonl")) lines += ch == '\n' ? 1 : 0;
  EXPECT_EQ(lines, crops.size());
  // The same thumbnail from the command line with the same flags: the same bytes.
  r = run_rsz(dir, "thumbnail -i " + photo("rocket.jpg") +
                      " -o same.jpg --size 200 --quality 40 --strip --grayscale --no-exif -q");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(test::read_file(dir / "out/t/rocket.jpg"), test::read_file(dir / "same.jpg"));
  r = run_rsz(dir, "thumbnail -i " + photo("rocket.jpg") + " -o default.jpg --size 200 -q");
  EXPECT_NE(test::read_file(dir / "out/t/rocket.jpg"), test::read_file(dir / "default.jpg"));
  test::write_file(dir / "bad.json", "{\"inputs\": [\"" + photo("rocket.jpg") + "\"], \"steps\": [{\"op\": \"resample\", "
                   "\"config\": {\"size\": \"9x9\"}, \"manifest\": \"m.jsonl\"}]}");
  r = run_rsz(dir, "run bad.json");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("\"manifest\" is only for roi_align steps"), std::string::npos) << r.err;
}

// The run-level settings table (rsz/io/run_settings.h) on the command line: every row's flag on the commands it
// names, in their --help, bound to an option (an unbound row is an internal error at start-up); rsz run takes every
// run-level flag, and a flag given to it wins over the batch file's key.
TEST(BatchFiles, EveryRunLevelFlagIsTakenByRunAndBeatsTheFilesKey) {
  ScratchDir dir("run-settings");
  const auto help_of = [&](const std::string& command) {
    const auto r = run_rsz(dir, command + " --help");
    EXPECT_EQ(r.status, 0) << r.err;
    return r.out;
  };
  const std::map<std::string, unsigned> commands = {
      {"resample", io::kUseOperators | io::kUseResize}, {"thumbnail", io::kUseOperators | io::kUseResize},
      {"upsample", io::kUseOperators}, {"roi-align", io::kUseOperators | io::kUseRoiAlign}, {"run", io::kUseRun}};
  for (const auto& [command, uses] : commands) {
    const std::string help = help_of(command);
    for (const io::RunSettingSpec& row : io::run_settings()) {
      EXPECT_EQ(row.key, [&] {
        std::string k = row.long_name();
        std::replace(k.begin(), k.end(), '-', '_');
        return k;
      }()) << "the Python keyword of --" << row.long_name() << " is its key";
      const bool listed = help.find("--" + row.long_name() + " ") != std::string::npos ||
                          help.find("--" + row.long_name() + "\n") != std::string::npos;
      EXPECT_EQ(listed, (row.uses & uses) != 0) << command << " --" << row.long_name();
    }
  }
  // --strict on rsz run (a batch key until now only): an RGBA PNG into JPEG is refused instead of flattened.
  io::Image rgba;
  rgba.width = 8;
  rgba.height = 6;
  rgba.channels = 4;
  rgba.data8.assign(8 * 6 * 4, 200);
  io::write_image(dir / "a.png", rgba);
  const std::string steps = "\"steps\": [{\"op\": \"thumbnail\", \"config\": {\"size\": \"4\"}, "
                            "\"output\": \"{stem}.jpg\"}]}";
  test::write_file(dir / "job.json", "{\"inputs\": [\"a.png\"], \"output_dir\": \"out\", \"quality\": 20, " + steps);
  auto r = run_rsz(dir, "run job.json --strict -q");
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_FALSE(fs::exists(dir.path() / "out/a.jpg"));
  // The file says quality 20; --quality 90 given to rsz run wins: the bytes of thumbnail --quality 90.
  r = run_rsz(dir, "run job.json --quality 90 -q");
  ASSERT_EQ(r.status, 0) << r.err;
  r = run_rsz(dir, "thumbnail -i a.png -o q90.jpg --size 4 --quality 90 -q");
  ASSERT_EQ(r.status, 0) << r.err;
  r = run_rsz(dir, "thumbnail -i a.png -o q20.jpg --size 4 --quality 20 -q");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(test::read_file(dir / "out/a.jpg"), test::read_file(dir / "q90.jpg"));
  EXPECT_NE(test::read_file(dir / "q20.jpg"), test::read_file(dir / "q90.jpg"));
  // Without the flag the file's key holds.
  r = run_rsz(dir, "run job.json -q");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(test::read_file(dir / "out/a.jpg"), test::read_file(dir / "q20.jpg"));
  // A bool flag given false beats the file's true: --strict=false flattens the alpha the file's "strict" refuses.
  test::write_file(dir / "strict.json", "{\"inputs\": [\"a.png\"], \"output_dir\": \"s\", \"strict\": true, " + steps);
  r = run_rsz(dir, "run strict.json -q");
  EXPECT_EQ(r.status, 2) << r.err;
  r = run_rsz(dir, "run strict.json --strict=false -q");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(fs::exists(dir.path() / "s/a.jpg"));
  // rsz run's -o names a folder, "-" too: its outputs stay there (standard output is the operators' -o -).
  r = run_rsz(dir, "run job.json -o - -q --quality +90");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(test::read_file(dir / "-/a.jpg"), test::read_file(dir / "q90.jpg"));
  // A flag's text is checked as the operators' is; a batch key's in the file's words.
  r = run_rsz(dir, "run job.json --quality 0");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--quality"), std::string::npos) << r.err;
  test::write_file(dir / "bad.json", "{\"inputs\": [\"a.png\"], \"depth\": 12, " + steps);
  r = run_rsz(dir, "run bad.json");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("bad.json: key \"depth\" at /depth: expected 8 or 16, got 12"), std::string::npos) << r.err;
}

// The output keys of a batch file: "background", "strict", "lossless" and "shrink_on_load" say what --background,
// --strict, --lossless and --shrink-on-load say: the same bytes as the flags; a bad colour names the key.
TEST(BatchFiles, OutputKeysSayWhatTheFlagsSay) {
  ScratchDir dir("batch-output-keys");
  io::Image rgba;
  rgba.width = 40;
  rgba.height = 30;
  rgba.channels = 4;
  rgba.data8.resize(40 * 30 * 4);
  for (std::size_t i = 0; i < rgba.data8.size(); ++i) rgba.data8[i] = static_cast<std::uint8_t>(i % 4 == 3 ? i % 251 : i % 199);
  io::write_image(dir / "a.png", rgba);
  const std::string head = "{\"inputs\": [\"a.png\", \"" + photo("rocket.jpg") + "\"], \"output_dir\": \"out\", ";
  const std::string steps = "\"steps\": [{\"op\": \"thumbnail\", \"config\": {\"size\": \"20\"}, "
                            "\"output\": \"j/{stem}.jpg\"}, {\"op\": \"thumbnail\", \"config\": {\"size\": \"20\"}, "
                            "\"output\": \"w/{stem}.webp\"}]}";
  test::write_file(dir / "job.json", head + "\"background\": \"#204080\", \"lossless\": true, \"shrink_on_load\": true, " + steps);
  auto r = run_rsz(dir, "run job.json -q");
  ASSERT_EQ(r.status, 0) << r.err;
  for (const std::string& in : {std::string("a.png"), photo("rocket.jpg")}) {
    const std::string stem = fs::path(in).stem().string();
    r = run_rsz(dir, "thumbnail -i " + in + " --size 20 --background '#204080' --shrink-on-load -q -o " + stem + ".jpg");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(test::read_file(dir / ("out/j/" + stem + ".jpg")), test::read_file(dir / (stem + ".jpg"))) << in;
    r = run_rsz(dir, "thumbnail -i " + in + " --size 20 --lossless --shrink-on-load -q -o " + stem + ".webp");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(test::read_file(dir / ("out/w/" + stem + ".webp")), test::read_file(dir / (stem + ".webp"))) << in;
  }
  // Flattened onto the colour, not white: the default run differs.
  r = run_rsz(dir, "thumbnail -i a.png --size 20 -q -o white.jpg");
  EXPECT_NE(test::read_file(dir / "out/j/a.jpg"), test::read_file(dir / "white.jpg"));
  test::write_file(dir / "strict.json", head + "\"strict\": true, " + steps);
  r = run_rsz(dir, "run strict.json -o strict-out");
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("strict-out/j/a.jpg: JPEG cannot hold an alpha channel"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir.path() / "strict-out"));
  test::write_file(dir / "color.json", head + "\"background\": \"teal\", " + steps);
  r = run_rsz(dir, "run color.json -o color-out");
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("color.json: \"background\" teal: white, black, gray, #RRGGBB or R,G,B"), std::string::npos)
      << r.err;
}

TEST(ChainedSteps, AStepCanRunOnThePreviousStepsOutputs) {
  ScratchDir dir("chain");
  const std::string inputs = "\"inputs\": [\"" + photo("chelsea.png") + "\", \"" + photo("camera.png") + "\"]";
  const std::string steps =
      "\"steps\": [{\"op\": \"resample\", \"config\": {\"scales\": [1, 1, 0.5, 0.5]}, \"output\": \"half/{stem}.png\"}, "
      "{\"op\": \"resample\", \"config\": {\"scales\": [1, 1, 2, 2]}, \"output\": \"double/{stem}.png\", "
      "\"input\": \"previous\"}]";
  test::write_file(dir / "chain.json", "{" + inputs + ", \"output_dir\": \"out\", " + steps + "}");
  auto r = run_rsz(dir, "run chain.json --dry-run");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("out/half/chelsea.png -> out/double/chelsea.png"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(dir.path() / "out"));
  r = run_rsz(dir, "run chain.json -q");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(list_files(dir.path() / "out"),
            (std::vector<std::string>{"double/camera.png", "double/chelsea.png", "half/camera.png",
                                      "half/chelsea.png"}));
  // 451 x 300 -> 225 x 150 -> 450 x 300: the second step resized the first one's output.
  r = run_rsz(dir, "info out/double/chelsea.png");
  EXPECT_NE(r.out.find("450x300"), std::string::npos) << r.out;
  // Refusals: an unknown value, a chained first step.
  test::write_file(dir / "bad.json", "{" + inputs + ", \"steps\": [{\"op\": \"resample\", \"config\": "
                                     "{\"scales\": [1, 1, 2, 2]}, \"input\": \"previous\"}]}");
  r = run_rsz(dir, "run bad.json");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("the first step has no previous step"), std::string::npos) << r.err;
}

// The whole batch is planned before anything is written, chained steps included: a request a chained step cannot
// meet (found from what the step before it would write) stops the run with nothing written, and --dry-run says the
// same; a chained roi_align step whose ROI file names its own images (it would not run on the previous outputs) is
// refused; a chained step is planned with the sizes the step before it will write (a thumbnail step here).
TEST(ChainedSteps, TheWholeChainIsPlannedBeforeAnythingIsWritten) {
  ScratchDir dir("chain-plan");
  const std::string head = "{\"inputs\": [\"" + photo("chelsea.png") + "\"], \"output_dir\": \"out\", \"steps\": [" +
                           "{\"op\": \"resample\", \"config\": {\"scales\": [1, 1, 0.5, 0.5]}, \"output\": "
                           "\"half/{stem}.png\"}, ";
  test::write_file(dir / "big.json", head + "{\"op\": \"resample\", \"config\": {\"scales\": [1, 1, 1000, 1000]}, "
                                            "\"output\": \"big/{stem}.png\", \"input\": \"previous\"}]}");
  for (const char* flags : {"", " --dry-run"}) {
    const auto r = run_rsz(dir, std::string("run big.json") + flags);
    EXPECT_EQ(r.status, 2) << flags;
    EXPECT_NE(r.err.find("out/half/chelsea.png: the output would be 225000 x 150000 pixels"), std::string::npos)
        << r.err;
    EXPECT_FALSE(fs::exists(dir.path() / "out")) << flags;
  }
  test::write_file(dir / "crops.json",
                   head + "{\"op\": \"roi_align\", \"config\": {\"output_height\": 8, \"output_width\": 8}, \"rois\": \"" +
                       std::string(RSZ_SOURCE_DIR) + "/samples/rois/dataset.json\", \"output\": \"c/{id}.png\", "
                       "\"input\": \"previous\"}]}");
  for (const char* flags : {"", " --dry-run"}) {
    const auto r = run_rsz(dir, std::string("run crops.json") + flags);
    EXPECT_EQ(r.status, 2) << flags;
    EXPECT_NE(r.err.find("names its own images"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir.path() / "out")) << flags;
  }
  // A gray result written as WebP reads back as RGB (WebP has no gray): the plan knows, so a chained step that can
  // only write gray is refused before the first step writes anything.
  test::write_file(dir / "webp.json",
                   "{\"inputs\": [\"" + photo("camera.png") + "\"], \"output_dir\": \"out\", \"steps\": [" +
                       "{\"op\": \"resample\", \"config\": {\"scales\": [1, 1, 0.5, 0.5]}, \"output\": "
                       "\"half/{stem}.webp\"}, {\"op\": \"resample\", \"config\": {\"scales\": [1, 1, 0.5, 0.5]}, "
                       "\"output\": \"quarter/{stem}.pgm\", \"input\": \"previous\"}]}");
  for (const char* flags : {"", " --dry-run"}) {
    const auto r = run_rsz(dir, std::string("run webp.json") + flags);
    EXPECT_EQ(r.status, 2) << flags << ": " << r.err;
    EXPECT_NE(r.err.find("PGM"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir.path() / "out")) << flags;
  }
  test::write_file(dir / "thumb.json",
                   head + "{\"op\": \"thumbnail\", \"config\": {\"size\": \"100\", \"fit\": \"cover\"}, "
                          "\"output\": \"t/{stem}.npy\", \"input\": \"previous\"}]}");
  auto r = run_rsz(dir, "run thumb.json --dry-run --json");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("\"output\":\"out/t/chelsea.npy\""), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(dir.path() / "out"));
  r = run_rsz(dir, "run thumb.json -q");
  ASSERT_EQ(r.status, 0) << r.err;
  // A thumbnail step and a resample step with the default names ({stem}_{op}{ext}) do not clash.
  test::write_file(dir / "both.json", "{\"inputs\": [\"" + photo("chelsea.png") + "\"], \"output_dir\": \"both\", "
                   "\"steps\": [{\"op\": \"thumbnail\", \"config\": {\"size\": \"64\"}}, "
                   "{\"op\": \"resample\", \"config\": {\"size\": \"64x64\"}}]}");
  ASSERT_EQ(run_rsz(dir, "run both.json -q").status, 0);
  EXPECT_EQ(list_files(dir.path() / "both"),
            (std::vector<std::string>{"chelsea_resample.png", "chelsea_thumbnail.png"}));
  EXPECT_EQ(io::read_npy(dir / "out/t/chelsea.npy").sizes(), (Dims{1, 3, 100, 100}));
}

TEST(Streams, WhatCannotReachStandardOutputFailsTheCommand) {
  // --json records, a --dry-run list and rsz info's lines into a full or closed standard output: exit 1, said once;
  // a usage error stays 2.
  ScratchDir dir("stdout-fails");
  const std::string rsz = "'" + std::string(RSZ_BINARY) + "'";
  const std::string run = rsz + " resample -i " + photo("chelsea.png") + " -o out/ --scale 0.5 -q ";
  if (fs::exists("/dev/full")) {
    auto r = test::run_shell(dir, run + "--json > /dev/full");
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_EQ(r.err, "rsz: cannot write standard output: No space left on device\n");
    EXPECT_TRUE(fs::exists(dir.path() / "out/chelsea.png"));  // the output itself was written
    r = test::run_shell(dir, rsz + " info " + photo("chelsea.png") + " > /dev/full");
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_EQ(r.err, "rsz: cannot write standard output: No space left on device\n");
  }
  auto r = test::run_shell(dir, run + "--dry-run >&-");
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(r.err, "rsz: cannot write standard output: Bad file descriptor\n");
  r = test::run_shell(dir, run + "--json --scale 0 >&-");
  EXPECT_EQ(r.status, 2) << r.err;
  r = test::run_shell(dir, run + "--json");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("\"output\""), std::string::npos) << r.out;
}

TEST(Streams, StandardInputAndOutputCarryImages) {
  ScratchDir dir("streams");
  fs::create_directories(dir.path() / "tmp");
  const std::string rsz = "TMPDIR=tmp '" + std::string(RSZ_BINARY) + "'";
  auto r = run_rsz(dir, "resample -i " + photo("chelsea.png") + " -o file.png --scale 0.5 -q");
  ASSERT_EQ(r.status, 0) << r.err;
  // The same bytes through a pipe, the format detected from the first bytes and kept on the way out.
  r = test::run_shell(dir,
                      "cat " + photo("chelsea.png") + " | " + rsz + " resample -i - -o - --scale 0.5 -q > piped.png");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(test::read_file(dir / "piped.png"), test::read_file(dir / "file.png"));
  // --format picks the output's format; a stream rsz cannot recognize needs --format.
  r = test::run_shell(dir, "cat " + photo("rocket.jpg") + " | " + rsz +
                               " resample - -o - --size 32x32 --format png -q | head -c 4 | od -An -c");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("P   N   G"), std::string::npos) << r.out;
  r = test::run_shell(dir, "echo 'not an image' | " + rsz + " resample -i - -o x.png --scale 2");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "rsz: -i -: standard input is not a PNG, JPEG, BMP, TIFF, WebP, PPM/PGM, GIF, HEIC, AVIF or JPEG XL image or a "
            ".npy tensor (or is empty); give --format\n");
  // Standard output that cannot take the image (full, closed) fails the input (exit 1), saying so, and the summary
  // counts no file written; nothing is left behind.
  if (fs::exists("/dev/full")) {
    r = test::run_shell(dir, rsz + " resample -i " + photo("chelsea.png") + " -o - --scale 0.5 > /dev/full");
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_EQ(r.err, "rsz: " + photo("chelsea.png") +
                         ": -o -: cannot write standard output: No space left on device\n"
                         "rsz: 1 of 1 input failed; 0 files written\n");
  }
  r = test::run_shell(dir, rsz + " resample -i " + photo("chelsea.png") + " -o - --scale 0.5 >&-");
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(r.err, "rsz: " + photo("chelsea.png") +
                       ": -o -: cannot write standard output: Bad file descriptor\n"
                       "rsz: 1 of 1 input failed; 0 files written\n");
  EXPECT_TRUE(list_files(dir.path() / "tmp").empty());
  // A stream that is not what --format says is named as standard input, not as rsz's scratch copy of it.
  r = test::run_shell(dir, "echo 'not an image' | " + rsz + " resample -i - -o x.png --scale 2 --format png");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err.rfind("rsz: standard input (-i -): not an image file of a known format", 0), 0u) << r.err;
  EXPECT_EQ(r.err.find("rsz-stream-"), std::string::npos) << r.err;
  // Every format rsz reads is recognized on standard input as its files are (the codec table's sniffers): the same
  // bytes as from the file.
  for (const std::string ext : {"bmp", "tif", "webp", "ppm", "pgm", "npy"}) {
    const std::string gray = ext == "pgm" ? " --grayscale" : "";
    r = run_rsz(dir, "resample -i " + photo("chelsea.png") + " -o in." + ext + " --scale 0.25 -q" + gray);
    ASSERT_EQ(r.status, 0) << ext << ": " << r.err;
    r = run_rsz(dir, "resample -i in." + ext + " -o from_file_" + ext + ".npy --scale 0.5 -q");
    ASSERT_EQ(r.status, 0) << ext << ": " << r.err;
    r = test::run_shell(dir, "cat in." + ext + " | " + rsz + " resample -i - -o piped_" + ext + ".npy --scale 0.5 -q");
    ASSERT_EQ(r.status, 0) << ext << ": " << r.err;
    EXPECT_EQ(test::read_file(dir / ("piped_" + ext + ".npy")), test::read_file(dir / ("from_file_" + ext + ".npy")))
        << ext;
  }
  r = run_rsz(dir, "resample -i " + photo("chelsea.png") + " -i " + photo("camera.png") + " -o - --scale 2");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("standard output takes one output"), std::string::npos) << r.err;
  r = run_rsz(dir, "resample -i " + photo("chelsea.png") + " -o - --scale 2 --json");
  EXPECT_EQ(r.status, 2);
  // Nothing is left in the scratch folder's parent.
  EXPECT_TRUE(fs::is_empty(dir.path() / "tmp"));
}

}  // namespace
}  // namespace rsz
