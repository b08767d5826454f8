// Past one machine, end to end: --shard I/N (the union of the shards is the whole run, byte for byte; adding inputs
// moves no input to another shard), rsz plan and --plan STATE --shard I (markers, resuming, parameters pinned) and
// rsz merge.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli_support.h"
#include "rsz/io/npy.h"
#include "support/test_util.h"

namespace fs = std::filesystem;

namespace rsz {
namespace {

using test::list_files;
using test::run_rsz;
using test::ScratchDir;

using test::photo;

// The input folder of these tests: the sample photos, and small generated tensors in sub-folders (two named alike).
void make_inputs(const ScratchDir& dir, int generated, const std::string& prefix = "g") {
  fs::create_directories(dir.path() / "in/gen/deep");
  for (const char* name : {"camera.png", "chelsea.png", "coffee.png", "rocket.jpg"}) {
    const fs::path target = dir.path() / "in" / name;
    if (!fs::exists(target)) fs::copy_file(photo(name), target);
  }
  for (int i = 0; i < generated; ++i) {
    const std::string name = prefix + std::to_string(i) + ".npy";
    const Tensor t = test::random_f32({1, 2, 6, 5}, static_cast<std::uint32_t>(i + 1));
    io::write_npy(dir / ("in/gen/" + name), t.view());
    if (i % 3 == 0) io::write_npy(dir / ("in/gen/deep/" + name), t.view());
  }
}

// FNV-1a 64, the documented hash of an input's key.
std::int64_t shard_of(const std::string& key, std::int64_t n) {
  std::uint64_t h = 14695981039346656037ull;
  for (const char c : key) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return static_cast<std::int64_t>(h % static_cast<std::uint64_t>(n));
}

// "in -> out" lines of a --dry-run: the inputs it would process.
std::set<std::string> dry_run_inputs(const std::string& out) {
  std::set<std::string> inputs;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    const std::size_t arrow = line.find(" -> ");
    if (arrow != std::string::npos) inputs.insert(line.substr(0, arrow));
  }
  return inputs;
}

void expect_same_tree(const fs::path& a, const fs::path& b) {
  const std::vector<std::string> files = list_files(a);
  ASSERT_FALSE(files.empty());
  EXPECT_EQ(files, list_files(b));
  for (const std::string& f : files) {
    EXPECT_EQ(test::read_file((a / f).string()), test::read_file((b / f).string())) << f;
  }
}

TEST(Shards, TheUnionOfThreeShardsIsTheWholeRunByteForByte) {
  ScratchDir dir("shards-union");
  make_inputs(dir, 12);
  const std::string base = "resample -i in -r --scale 0.5 ";
  auto r = run_rsz(dir, base + "-o 'whole/{relpath}{ext}' -q");
  ASSERT_EQ(r.status, 0) << r.err;
  const std::size_t total = list_files(dir.path() / "whole").size();
  ASSERT_EQ(total, 4u + 12u + 4u);
  std::size_t counted = 0;
  for (int i = 0; i < 3; ++i) {
    r = run_rsz(dir, base + "-o 'sharded/{relpath}{ext}' --shard " + std::to_string(i) + "/3");
    ASSERT_EQ(r.status, 0) << r.err;
    const std::string prefix = "rsz: shard " + std::to_string(i) + "/3: ";
    const std::size_t at = r.err.find(prefix);
    ASSERT_NE(at, std::string::npos) << r.err;
    const std::size_t k = std::stoul(r.err.substr(at + prefix.size()));
    EXPECT_NE(r.err.find(std::to_string(k) + " of " + std::to_string(total) + " inputs; wrote " + std::to_string(k) +
                         " file"),
              std::string::npos)
        << r.err;
    counted += k;
  }
  EXPECT_EQ(counted, total);  // disjoint: every input in exactly one shard
  expect_same_tree(dir.path() / "whole", dir.path() / "sharded");
}

TEST(Shards, AnInputsShardIsTheHashOfItsPathBelowTheRootAndAddingInputsMovesNone) {
  ScratchDir dir("shards-stable");
  make_inputs(dir, 6);
  constexpr int kShards = 4;
  const auto shards = [&] {
    std::map<std::string, int> shard;
    for (int i = 0; i < kShards; ++i) {
      const auto r = run_rsz(dir, "resample -i in -r --scale 0.5 -o 'out/{relpath}{ext}' -n --shard " +
                                      std::to_string(i) + "/" + std::to_string(kShards));
      EXPECT_EQ(r.status, 0) << r.err;
      for (const std::string& input : dry_run_inputs(r.out)) {
        EXPECT_EQ(shard.count(input), 0u) << input << " in two shards";
        shard[input] = i;
      }
    }
    return shard;
  };
  const std::map<std::string, int> before = shards();
  ASSERT_EQ(before.size(), 4u + 6u + 2u);
  for (const auto& [input, shard] : before) {  // the key: the path below -i's folder, without extension
    std::string key = fs::path(input).lexically_relative("in").replace_extension().generic_string();
    EXPECT_EQ(shard, shard_of(key, kShards)) << input;
  }
  make_inputs(dir, 9, "h");  // more files, some beside the old ones
  const std::map<std::string, int> after = shards();
  ASSERT_EQ(after.size(), before.size() + 9u + 3u);
  for (const auto& [input, shard] : before) EXPECT_EQ(after.at(input), shard) << input;
}

TEST(Shards, DatasetImagesAndBatchRunsAreShardedToo) {
  ScratchDir dir("shards-dataset");
  dir.copy_project_files();
  const std::string dataset = "roi-align --rois samples/rois/dataset.json --output-size 16x16 -o '";
  auto r = run_rsz(dir, dataset + "whole/{id}.png' -q");
  ASSERT_EQ(r.status, 0) << r.err;
  for (int i = 0; i < 2; ++i) {
    r = run_rsz(dir, dataset + "sharded/{id}.png' --shard " + std::to_string(i) + "/2");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.err.find("shard " + std::to_string(i) + "/2: "), std::string::npos) << r.err;
  }
  expect_same_tree(dir.path() / "whole", dir.path() / "sharded");
  // rsz run: a chained batch follows its shard's inputs through every step.
  r = run_rsz(dir, "run configs/batch_chain.json -o whole_run -q");
  ASSERT_EQ(r.status, 0) << r.err;
  for (int i = 0; i < 3; ++i) {
    r = run_rsz(dir, "run configs/batch_chain.json -o sharded_run -q --shard " + std::to_string(i) + "/3");
    ASSERT_EQ(r.status, 0) << r.err;
  }
  expect_same_tree(dir.path() / "whole_run", dir.path() / "sharded_run");
}

// Annotations that name their own images (COCO here) run under --plan too: each shard takes the images whose key
// below the image root falls in it, so the shards together write what one run writes, and an image the annotations
// name that does not exist fails in exactly one shard (merge lists that shard), never silently in none.
TEST(Plan, CocoAnnotationsNamingTheirImagesRunShardByShard) {
  ScratchDir dir("plan-coco");
  dir.copy_project_files();
  nlohmann::json coco = nlohmann::json::parse(test::read_text(dir.path() / "samples/annotations/coco.json"));
  coco["images"].push_back({{"id", 9}, {"file_name", "gone.png"}, {"width", 40}, {"height", 30}});
  coco["annotations"].push_back({{"id", 901}, {"image_id", 9}, {"category_id", 1}, {"bbox", {1, 1, 9, 9}},
                                 {"area", 81}, {"iscrowd", 0}});
  std::ofstream(dir.path() / "coco.json") << coco.dump();
  const std::string crops = "roi-align --rois coco.json --image-root samples/photos --output-size 16x16 -q -o '";
  auto r = run_rsz(dir, crops + "whole/{stem}_{id}.png'");
  ASSERT_EQ(r.status, 1) << r.err;  // gone.png fails alone
  ASSERT_EQ(run_rsz(dir, "plan -i samples/photos --shards 3 -o state -q").status, 0);
  int failing = 0;
  int gone_shard = -1;
  for (int i = 0; i < 3; ++i) {
    r = run_rsz(dir, crops + "sharded/{stem}_{id}.png' --plan state --shard " + std::to_string(i));
    ASSERT_NE(r.status, 2) << r.err;
    if (r.status == 1) {
      ++failing;
      gone_shard = i;
      EXPECT_NE(r.err.find("gone.png"), std::string::npos) << r.err;
    }
  }
  EXPECT_EQ(failing, 1);
  EXPECT_EQ(gone_shard, shard_of("gone", 3));
  expect_same_tree(dir.path() / "whole", dir.path() / "sharded");
  r = run_rsz(dir, "merge state --json");
  EXPECT_EQ(r.status, 1);
  const nlohmann::json report = nlohmann::json::parse(r.out);
  EXPECT_EQ(report["rerun"], std::to_string(gone_shard));
  EXPECT_EQ(report["inputs"], 3);  // chelsea, coffee and gone: the images the annotations name
  EXPECT_EQ(report["failed_inputs"], 1);
}

// Two inputs of one name in different folders may fall in different shards, which cannot see each other's names:
// outputs named without the folder are refused under --plan (before, the second shard kept the first's output as
// its own and reported success), naming the two inputs; {relpath} names and tar members run.
TEST(Plan, InputsOfOneNameInTwoFoldersNeedOutputsNamedByFolder) {
  ScratchDir dir("plan-same-name");
  make_inputs(dir, 4);  // in/gen/g0.npy beside in/gen/deep/g0.npy, and g3
  ASSERT_EQ(run_rsz(dir, "plan -i in -r --shards 3 -o state -q").status, 0);
  const nlohmann::json plan = nlohmann::json::parse(test::read_file(dir / "state/plan.json"));
  ASSERT_TRUE(plan["same_name"].is_object()) << plan;
  const std::string name = plan["same_name"]["name"];
  EXPECT_TRUE(name == "g0" || name == "g3") << plan;  // the first in the lists' order
  EXPECT_EQ(plan["same_name"]["count"], 2);
  for (int i = 0; i < 3; ++i) {
    const auto r = run_rsz(dir, "resample --plan state --shard " + std::to_string(i) + " --scale 0.5 -o out/ -q");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("in/gen/deep/" + name + ".npy"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("in/gen/" + name + ".npy"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("{relpath}"), std::string::npos) << r.err;
  }
  EXPECT_FALSE(fs::exists(dir.path() / "out"));
  for (int i = 0; i < 3; ++i) {
    auto r = run_rsz(dir, "resample --plan state --shard " + std::to_string(i) + " --scale 0.5 -o 'out/{relpath}{ext}' -q");
    EXPECT_EQ(r.status, 0) << r.err;
  }
  EXPECT_EQ(list_files(dir.path() / "out").size(), 4u + 4u + 2u);
  // A plan without shared names has "same_name": null and takes a plain folder.
  ScratchDir flat("plan-unique-names");
  make_inputs(flat, 0);
  ASSERT_EQ(run_rsz(flat, "plan -i in -r --shards 2 -o state -q").status, 0);
  EXPECT_TRUE(nlohmann::json::parse(test::read_file(flat / "state/plan.json"))["same_name"].is_null());
  EXPECT_EQ(run_rsz(flat, "thumbnail --plan state --shard 0 --size 8 -o out/ -q").status, 0);
}

TEST(Shards, ShardFlagsAreCheckedBeforeAnythingRuns) {
  ScratchDir dir("shards-usage");
  auto r = run_rsz(dir, "resample -i in -o out/ --scale 0.5 --shard 3/3");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--shard 3/3: shard 3 of 3 does not exist; 0 to 2 is allowed"), std::string::npos) << r.err;
  r = run_rsz(dir, "resample -i in -o out/ --scale 0.5 --shard x/3");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("not a shard"), std::string::npos) << r.err;
  fs::create_directories(dir.path() / "in");
  fs::copy_file(photo("camera.png"), dir / "in/camera.png");
  r = run_rsz(dir, "resample -i in -o out/ --scale 0.5 --shard 1");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("give I/N"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir.path() / "out"));
}


// The "rsz: shard I/N: ..." line's numbers after `what` ("wrote 1 file" -> 1).
std::size_t number_after(const std::string& text, const std::string& what) {
  const std::size_t at = text.find(what);
  if (at == std::string::npos) return static_cast<std::size_t>(-1);
  return std::stoul(text.substr(at + what.size()));
}

TEST(Plan, ShardListsRunToTheWholeJobAndAKilledShardResumesWhereItStopped) {
  ScratchDir dir("plan-resume");
  make_inputs(dir, 9);
  fs::copy_file(photo("camera.png"), dir.path() / "in/gen/new\nline.png");  // a name the lists escape
  const std::size_t total = 4 + 9 + 3 + 1;
  auto r = run_rsz(dir, "plan -i in -r --shards 3 -o state");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("planned " + std::to_string(total) + " inputs in 3 shards"), std::string::npos) << r.err;
  const nlohmann::json plan = nlohmann::json::parse(test::read_file(dir / "state/plan.json"));
  EXPECT_EQ(plan["shards"], 3);
  EXPECT_EQ(plan["total"], total);
  ASSERT_EQ(plan["counts"].size(), 3u);
  EXPECT_EQ(plan["counts"][0].get<std::size_t>() + plan["counts"][1].get<std::size_t>() +
                plan["counts"][2].get<std::size_t>(),
            total);
  EXPECT_NE(test::read_file(dir / "state/shards/00000.txt").find("gen/new\\nline.png") ==
                std::string::npos &&
                test::read_file(dir / "state/shards/00001.txt").find("gen/new\\nline.png") == std::string::npos,
            test::read_file(dir / "state/shards/00002.txt").find("gen/new\\nline.png") == std::string::npos);
  // The plan's shards are --shard I/3's.
  for (int i = 0; i < 3; ++i) {
    const auto listed = run_rsz(dir, "resample -i in -r --scale 0.5 -o 'x/{relpath}{ext}' -n --shard " +
                                         std::to_string(i) + "/3");
    const auto planned = run_rsz(dir, "resample --plan state --shard " + std::to_string(i) +
                                          " --scale 0.5 -o 'x/{relpath}{ext}' -n");
    ASSERT_EQ(planned.status, 0) << planned.err;
    EXPECT_EQ(listed.out, planned.out);
    EXPECT_EQ(std::count(planned.out.begin(), planned.out.end(), '\n'),
              plan["counts"][static_cast<std::size_t>(i)].get<long>());
  }
  const std::string command = "resample --scale 0.5 -o 'sharded/{relpath}{ext}' --plan state --shard ";
  r = run_rsz(dir, "resample -i in -r --scale 0.5 -o 'whole/{relpath}{ext}' -q");
  ASSERT_EQ(r.status, 0) << r.err;
  for (int i = 0; i < 3; ++i) {
    r = run_rsz(dir, command + std::to_string(i));
    ASSERT_EQ(r.status, 0) << r.err;
    const nlohmann::json done =
        nlohmann::json::parse(test::read_file(dir / ("state/done/0000" + std::to_string(i) + ".json")));
    EXPECT_EQ(done["inputs"], plan["counts"][static_cast<std::size_t>(i)]);
    EXPECT_EQ(done["outputs"], plan["counts"][static_cast<std::size_t>(i)]);
    EXPECT_EQ(done["written"], plan["counts"][static_cast<std::size_t>(i)]);
    EXPECT_EQ(done["kept"], 0);
    EXPECT_EQ(done["failed"], 0);
    EXPECT_EQ(done["list_fingerprint"], plan["fingerprints"][static_cast<std::size_t>(i)]);
  }
  expect_same_tree(dir.path() / "whole", dir.path() / "sharded");
  // Run again: done at once.
  r = run_rsz(dir, command + "1");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("rsz: shard 1/3 is done already"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  // A shard killed before its marker, one output short: only that output is written again.
  int shard = 0;
  while (plan["counts"][static_cast<std::size_t>(shard)].get<int>() < 2) ++shard;
  const std::string list = test::read_file(dir / ("state/shards/0000" + std::to_string(shard) + ".txt"));
  std::vector<std::string> outputs;
  std::istringstream lines(list);
  for (std::string line; std::getline(lines, line);) {
    if (line.find('\\') != std::string::npos) continue;
    const fs::path input = line.substr(0, line.find('\t'));
    outputs.push_back("sharded/" + input.lexically_relative("in").string());
  }
  ASSERT_GE(outputs.size(), 2u);
  fs::remove(dir.path() / ("state/done/0000" + std::to_string(shard) + ".json"));
  fs::remove(dir.path() / outputs[0]);
  const auto kept_time = fs::last_write_time(dir.path() / outputs[1]);
  r = run_rsz(dir, command + std::to_string(shard));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(number_after(r.err, "wrote "), 1u) << r.err;
  const std::size_t listed = plan["counts"][static_cast<std::size_t>(shard)].get<std::size_t>();
  EXPECT_EQ(number_after(r.err, "skipped "), listed - 1) << r.err;
  EXPECT_EQ(fs::last_write_time(dir.path() / outputs[1]), kept_time);
  const nlohmann::json done =
      nlohmann::json::parse(test::read_file(dir / ("state/done/0000" + std::to_string(shard) + ".json")));
  // outputs: the files of the shard's inputs after the run (written + kept); written: this run's; skipped: inputs.
  EXPECT_EQ(done["written"], 1);
  EXPECT_EQ(done["kept"], listed - 1);
  EXPECT_EQ(done["outputs"], listed);
  EXPECT_EQ(done["skipped"], listed - 1);
  EXPECT_TRUE(done["counts"].contains("outputs")) << done;
  expect_same_tree(dir.path() / "whole", dir.path() / "sharded");
}

TEST(Plan, OtherParametersThanThePinnedOnesAreRefused) {
  ScratchDir dir("plan-pinned");
  make_inputs(dir, 3);
  ASSERT_EQ(run_rsz(dir, "plan -i in -r --shards 2 -o state -q").status, 0);
  auto r = run_rsz(dir, "resample --plan state --shard 0 --scale 0.5 -o 'out/{relpath}{ext}' -j 2 -q");
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json pinned = nlohmann::json::parse(test::read_file(dir / "state/params.json"));
  EXPECT_EQ(pinned["command"], "resample");
  r = run_rsz(dir, "resample --plan state --shard 1 --scale 0.25 -o 'out/{relpath}{ext}'");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("the parameters differ from the ones this plan was run with (state/params.json): "
                       "scale=0.25 here, scale=0.5 there"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(dir.path() / "state/done/00001.json"));
  r = run_rsz(dir, "thumbnail --plan state --shard 1 --size 8 -o 'out/{relpath}{ext}'");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("command=thumbnail here, command=resample there"), std::string::npos) << r.err;
  // Scheduling flags are not parameters: -j, --json, -q, --no-sync; and a number is its value, however written.
  r = run_rsz(dir, "resample --plan state --shard 1 --scale .50 -o 'out/{relpath}{ext}' --json --no-sync -j 1 -q");
  EXPECT_EQ(r.status, 0) << r.err;
  fs::remove(dir.path() / "state/done/00001.json");
  r = run_rsz(dir, "resample --plan state --shard 1 --scale 5e-1 -o 'out/{relpath}{ext}' -q");
  EXPECT_EQ(r.status, 0) << r.err;
  // -i with --plan, a shard the plan does not have, a plan that is not there.
  r = run_rsz(dir, "resample -i in --plan state --shard 1 --scale 0.5 -o 'out/{relpath}{ext}'");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--plan state: the inputs come from the plan's shard list; drop -i"), std::string::npos)
      << r.err;
  r = run_rsz(dir, "resample --plan state --shard 2 --scale 0.5 -o 'out/{relpath}{ext}'");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--shard 2: the plan state has 2 shards; 0 to 1 is allowed"), std::string::npos) << r.err;
  r = run_rsz(dir, "resample --plan nowhere --shard 0 --scale 0.5 -o 'out/{relpath}{ext}'");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("no plan.json there"), std::string::npos) << r.err;
  r = run_rsz(dir, "plan -i in --shards 2 -o state");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("holds a plan already"), std::string::npos) << r.err;
}

TEST(Merge, ListsMissingAndFailedShardsInSlurmArraySyntax) {
  ScratchDir dir("plan-merge");
  make_inputs(dir, 12);
  ASSERT_EQ(run_rsz(dir, "plan -i in -r --shards 6 -o state -q").status, 0);
  const nlohmann::json plan = nlohmann::json::parse(test::read_file(dir / "state/plan.json"));
  const std::string command = "resample --scale 0.5 -o 'out/{relpath}{ext}' -q --plan state --shard ";
  for (const int i : {0, 1, 5}) ASSERT_EQ(run_rsz(dir, command + std::to_string(i)).status, 0);
  // Shard 5 fails an input: corrupt one of its files and run it again without its marker.
  const std::string list = test::read_file(dir / "state/shards/00005.txt");
  ASSERT_FALSE(list.empty());
  const std::string first = list.substr(0, list.find_first_of("\t\n"));
  fs::remove(dir.path() / "state/done/00005.json");
  fs::remove_all(dir.path() / "out");
  test::write_file(dir / first, "not an image");
  auto r = run_rsz(dir, command + "5");
  EXPECT_EQ(r.status, 1) << r.err;
  const nlohmann::json failed = nlohmann::json::parse(test::read_file(dir / "state/done/00005.json"));
  EXPECT_EQ(failed["failed"], 1);
  EXPECT_EQ(failed["status"], 1);
  r = run_rsz(dir, "merge state");
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.out.find("rsz: 2 of 6 shards done; 3 missing; 1 failed"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("missing shards (no marker): --array=2-4\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("failed shards (an input failed): --array=5\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("to run again: --array=2-5\n"), std::string::npos) << r.out;
  r = run_rsz(dir, "merge state --json");
  EXPECT_EQ(r.status, 1);
  const nlohmann::json report = nlohmann::json::parse(r.out);
  EXPECT_EQ(report["rerun"], "2-5");
  EXPECT_EQ(report["failed_inputs"], 1);
  // The failed shard runs again once its input is repaired; then every shard is done.
  fs::copy_file(photo("camera.png"), dir / first, fs::copy_options::overwrite_existing);
  for (const int i : {2, 3, 4, 5}) ASSERT_EQ(run_rsz(dir, command + std::to_string(i)).status, 0);
  r = run_rsz(dir, "merge state --json");
  EXPECT_EQ(r.status, 0) << r.out;
  const nlohmann::json all = nlohmann::json::parse(r.out);
  EXPECT_EQ(all["done"], 6);
  EXPECT_EQ(all["inputs"], plan["total"]);
  EXPECT_EQ(all["rerun"], "");
  r = run_rsz(dir, "merge nowhere");
  EXPECT_EQ(r.status, 2);
}

// Eight shards started at once, as a job array starts them: every one succeeds, the parameters are pinned once
// (params.json valid, the first writer's) and no temporary is left. `env` goes before each rsz.
void run_eight_shards_at_once(const std::string& env) {
  ScratchDir dir("plan-concurrent");
  make_inputs(dir, 12);
  ASSERT_EQ(run_rsz(dir, "plan -i in -r --shards 8 -o state -q").status, 0);
  const std::string rsz = env + " '" + std::string(RSZ_BINARY) + "'";
  const auto r = test::run_shell(
      dir, "pids=; for i in 0 1 2 3 4 5 6 7; do " + rsz +
               " resample --plan state --shard $i --scale 0.5 -o 'out/{relpath}{ext}' -q & pids=\"$pids $!\"; "
               "done; failed=0; for p in $pids; do wait $p || failed=$((failed + 1)); done; echo failed=$failed");
  EXPECT_EQ(r.out, "failed=0\n") << r.err;
  EXPECT_EQ(r.err, "");
  const nlohmann::json pinned = nlohmann::json::parse(test::read_file(dir / "state/params.json"));
  EXPECT_EQ(pinned["command"], "resample");
  EXPECT_NE(std::find(pinned["params"].begin(), pinned["params"].end(), "scale=0.5"), pinned["params"].end())
      << pinned;
  for (const std::string& f : list_files(dir.path() / "state")) {
    EXPECT_EQ(f.find(".tmp-"), std::string::npos) << f;
  }
  const auto merged = run_rsz(dir, "merge state --json");
  EXPECT_EQ(merged.status, 0) << merged.out;
  const nlohmann::json report = nlohmann::json::parse(merged.out);
  EXPECT_EQ(report["done"], 8);
  EXPECT_EQ(report["inputs"], 4 + 12 + 4);
  EXPECT_EQ(report["outputs"], 4 + 12 + 4);
  EXPECT_EQ(list_files(dir.path() / "out").size(), 4u + 12u + 4u);
}

TEST(Plan, ShardsStartedAtOncePinTheParametersOnce) { run_eight_shards_at_once(""); }

// In containers every rsz is PID 1: temporary names must not come from the PID.
TEST(Plan, ShardsStartedAtOnceAsPid1DoNotShareTemporaries) {
  if (std::string(RSZ_TEST_PRELOAD).empty()) GTEST_SKIP() << "no preload library in this build";
  for (int round = 0; round < 3; ++round) run_eight_shards_at_once("LD_PRELOAD='" + std::string(RSZ_TEST_PRELOAD) + "'");
}

// Shared storage without hard links (link(2) fails with EPERM): pinned by an exclusive create instead.
TEST(Plan, StorageWithoutHardLinksStillPinsTheParametersOnce) {
  if (std::string(RSZ_TEST_PRELOAD).empty()) GTEST_SKIP() << "no preload library in this build";
  for (int round = 0; round < 2; ++round) {
    run_eight_shards_at_once("RSZ_TEST_NO_LINK=1 LD_PRELOAD='" + std::string(RSZ_TEST_PRELOAD) + "'");
  }
  ScratchDir dir("plan-nolink");
  make_inputs(dir, 3);
  ASSERT_EQ(run_rsz(dir, "plan -i in -r --shards 2 -o state -q").status, 0);
  const std::string env = "RSZ_TEST_NO_LINK=1 LD_PRELOAD='" + std::string(RSZ_TEST_PRELOAD) + "' ";
  auto r = test::run_shell(dir, env + "'" + RSZ_BINARY + "' resample --plan state --shard 0 --scale 0.5 -o 'out/{relpath}{ext}' -q");
  ASSERT_EQ(r.status, 0) << r.err;
  r = test::run_shell(dir, env + "'" + RSZ_BINARY + "' resample --plan state --shard 1 --scale 0.25 -o 'out/{relpath}{ext}' -q");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("scale=0.25 here, scale=0.5 there"), std::string::npos) << r.err;
}

// With --plan each shard writes its own manifest (its number before the extension); rsz merge joins them into the
// name given once every shard is done: one row per crop written, a .csv's header once.
TEST(Merge, JoinsTheShardsManifestsIntoTheNameGiven) {
  ScratchDir dir("plan-manifest");
  dir.copy_project_files();
  ASSERT_EQ(run_rsz(dir, "plan -i samples/photos --shards 2 -o state -q").status, 0);
  for (const std::string ext : {"jsonl", "csv"}) {
    const std::string command = "roi-align --rois samples/annotations/yolo --names samples/annotations/classes.txt "
                                "--output-size 16x16 -o 'crops/{label}/{id}.png' --manifest crops/m." + ext +
                                " -q --plan state --shard ";
    fs::remove_all(dir.path() / "crops");
    fs::remove_all(dir.path() / "state/done");
    fs::remove(dir.path() / "state/params.json");
    auto r = run_rsz(dir, command + "0");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(fs::exists(dir.path() / ("crops/m.00000." + ext)));
    EXPECT_FALSE(fs::exists(dir.path() / ("crops/m." + ext)));
    r = run_rsz(dir, "merge state");  // not every shard done: nothing joined
    EXPECT_EQ(r.status, 1);
    EXPECT_FALSE(fs::exists(dir.path() / ("crops/m." + ext)));
    r = run_rsz(dir, command + "1");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(fs::exists(dir.path() / ("crops/m.00001." + ext)));
    r = run_rsz(dir, "merge state");
    ASSERT_EQ(r.status, 0) << r.out << r.err;
    std::set<std::string> crops;
    for (const std::string& f : list_files(dir.path() / "crops")) {
      if (fs::path(f).extension() == ".png") crops.insert("crops/" + f);
    }
    ASSERT_EQ(crops.size(), 5u);  // chelsea: 3 boxes, coffee: 2, in two shards
    EXPECT_NE(r.out.find("rsz: manifest crops/m." + ext + ": 5 rows from 2 shards"), std::string::npos) << r.out;
    std::istringstream lines(test::read_file(dir / ("crops/m." + ext)));
    std::vector<std::string> rows;
    for (std::string line; std::getline(lines, line);) rows.push_back(line);
    std::set<std::string> listed;
    if (ext == "csv") {
      ASSERT_FALSE(rows.empty());
      EXPECT_EQ(rows[0], "crop,source,x1,y1,x2,y2,label,id");
      rows.erase(rows.begin());
      for (const std::string& row : rows) listed.insert(row.substr(0, row.find(',')));
    } else {
      for (const std::string& row : rows) listed.insert(nlohmann::json::parse(row)["crop"].get<std::string>());
    }
    EXPECT_EQ(rows.size(), crops.size());
    EXPECT_EQ(listed, crops);
  }
}

// A YOLO (or VOC) folder is pinned by its files' names and bytes: a label changed between shards is refused.
TEST(Plan, AnAnnotationFoldersFilesArePinned) {
  ScratchDir dir("plan-folder-pinned");
  dir.copy_project_files();
  ASSERT_EQ(run_rsz(dir, "plan -i samples/photos --shards 2 -o state -q").status, 0);
  const std::string command = "roi-align --rois samples/annotations/yolo --names samples/annotations/classes.txt "
                              "--output-size 16x16 -o 'crops/{label}/{id}.png' -q --plan state --shard ";
  ASSERT_EQ(run_rsz(dir, command + "0").status, 0);
  const nlohmann::json pinned = nlohmann::json::parse(test::read_file(dir / "state/params.json"));
  const std::string params = pinned["params"].dump();
  EXPECT_NE(params.find("rois contents=fnv1a64:"), std::string::npos) << params;
  test::write_file(dir / "samples/annotations/yolo/coffee.txt",
                   test::read_file(dir / "samples/annotations/yolo/coffee.txt") + "0 0.5 0.5 0.1 0.1\n");
  const auto r = run_rsz(dir, command + "1");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("rois contents=fnv1a64:"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir.path() / "state/done/00001.json"));
}

// Without --plan no file is read to be hashed: a --rois file over the budget is refused from its size, and rsz's
// peak memory stays far below the file's size (it read 2x the file before).
TEST(Plan, FilesAreHashedOnlyWithPlanAndNeverReadWhole) {
  ScratchDir dir("plan-hash-budget");
  dir.copy_project_files();
  // Made by the shell: a fork of a test that held the text would count its pages in the children's peak.
  ASSERT_EQ(test::run_shell(dir, "{ printf '['; head -c 100663296 /dev/zero | tr '\\0' ' '; printf ']'; } > big.json")
                .status,
            0);
  ASSERT_EQ(fs::file_size(dir.path() / "big.json"), (std::uintmax_t{96} << 20) + 2);
  const auto r = run_rsz(dir, "roi-align -i samples/photos/chelsea.png --rois big.json --output-size 8x8 -o out/ "
                              "--max-memory 64M");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("over the memory budget"), std::string::npos) << r.err;
  rusage usage{};
  ASSERT_EQ(getrusage(RUSAGE_CHILDREN, &usage), 0);
  EXPECT_LT(usage.ru_maxrss, 64 * 1024) << "KiB";  // the most any rsz of this test held
}

// rsz plan writes into a new or empty folder only: a folder with other files is refused and left as it was.
TEST(Plan, AFolderThatIsNotEmptyIsRefusedAndKept) {
  ScratchDir dir("plan-not-empty");
  make_inputs(dir, 2);
  fs::create_directories(dir.path() / "state/shards");
  test::write_file(dir / "state/shards/mine.txt", "not rsz's");
  auto r = run_rsz(dir, "plan -i in --shards 2 -o state");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("-o state: exists and is not an empty folder"), std::string::npos) << r.err;
  EXPECT_EQ(test::read_file(dir / "state/shards/mine.txt"), "not rsz's");
  EXPECT_FALSE(fs::exists(dir.path() / "state/plan.json"));
  fs::create_directories(dir.path() / "empty");
  r = run_rsz(dir, "plan -i in --shards 2 -o empty -q");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(fs::exists(dir.path() / "empty/plan.json"));
}

// A refused plan (no input matches) takes back the lists it started, so that the corrected command runs; an empty
// folder given for the state stays (and empty).
TEST(Plan, ARefusedPlanLeavesNothingAndTheCorrectedOneRuns) {
  ScratchDir dir("plan-refused");
  make_inputs(dir, 3);
  auto r = run_rsz(dir, "plan -i 'nomatch/*.png' --shards 3 -o state");
  EXPECT_EQ(r.status, 2);
  EXPECT_FALSE(fs::exists(dir.path() / "state"));
  fs::create_directories(dir.path() / "empty");
  r = run_rsz(dir, "plan -i 'nomatch/*.png' --shards 3 -o empty");
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(fs::is_empty(dir.path() / "empty"));
  EXPECT_EQ(run_rsz(dir, "plan -i in -r --shards 3 -o state -q").status, 0);
  EXPECT_EQ(run_rsz(dir, "plan -i in -r --shards 3 -o empty -q").status, 0);
}

// State files of the wrong shape (valid JSON or not) name the file and exit 2, never a raw JSON exception; a done
// marker rsz cannot use is no marker: merge names it and lists its shard, and the shard's run replaces it.
TEST(Plan, StateFilesOfTheWrongShapeAreNamedAndAnUnusableMarkerIsReplaced) {
  ScratchDir dir("plan-shapes");
  make_inputs(dir, 4);
  ASSERT_EQ(run_rsz(dir, "plan -i in -r --shards 2 -o state -q").status, 0);
  const std::string command = "resample --scale 0.5 -o 'out/{relpath}{ext}' -q --plan state --shard ";
  ASSERT_EQ(run_rsz(dir, command + "0").status, 0);
  ASSERT_EQ(run_rsz(dir, command + "1").status, 0);
  const std::string marker = test::read_file(dir / "state/done/00000.json");
  for (const std::string& bad : {std::string("[]"), std::string("{\"inputs\": \"many\"}"), marker.substr(0, 40)}) {
    test::write_file(dir / "state/done/00000.json", bad);
    auto r = run_rsz(dir, "merge state");
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_NE(r.out.find("rsz: state/done/00000.json: not a marker as rsz writes it"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("to run again: --array=0\n"), std::string::npos) << r.out;
    EXPECT_EQ(r.err.find("json.exception"), std::string::npos) << r.err;
    r = run_rsz(dir, command + "0");
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(run_rsz(dir, "merge state").status, 0);
  }
  fs::remove(dir.path() / "state/done/00001.json");  // shard 1 runs again: it reads the pinned parameters
  const std::string params = test::read_file(dir / "state/params.json");
  for (const std::string& bad : {std::string("[]"), std::string("{\"hash\": 7, \"params\": []}"), params.substr(0, 30)}) {
    test::write_file(dir / "state/params.json", bad);
    for (const std::string& args : {std::string("merge state"), command + "1"}) {
      const auto r = run_rsz(dir, args);
      EXPECT_EQ(r.status, 2) << args;
      EXPECT_EQ(r.err.rfind("rsz: state/params.json: ", 0), 0u) << args << ": " << r.err;
      EXPECT_EQ(r.err.find("json.exception"), std::string::npos) << r.err;
    }
  }
  test::write_file(dir / "state/params.json", params);
  const std::string plan = test::read_file(dir / "state/plan.json");
  for (const std::string& bad : {std::string("[]"), std::string("{\"shards\": 2, \"fingerprints\": [1, 2]}"),
                                 std::string("{\"shards\": 2, \"fingerprints\": [\"a\", \"b\"], \"total\": \"x\"}"),
                                 std::string("{\"shards\": 2, \"fingerprints\": [\"a\", \"b\"], \"id\": 5}")}) {
    test::write_file(dir / "state/plan.json", bad);
    for (const std::string& args : {std::string("merge state"), command + "1"}) {
      const auto r = run_rsz(dir, args);
      EXPECT_EQ(r.status, 2) << args << " with plan.json " << bad;
      EXPECT_EQ(r.err.rfind("rsz: state/plan.json: ", 0), 0u) << args << ": " << r.err;
    }
  }
}

// rsz run --plan pins the files a batch step names (its ROIs) by their contents, as --rois given as a flag is: a COCO
// file changed between shards would mix the labels of two files while merge says done.
TEST(Plan, TheFilesABatchStepNamesArePinned) {
  ScratchDir dir("plan-batch-files");
  dir.copy_project_files();
  fs::copy_file(dir.path() / "samples/rois/dataset.json", dir.path() / "samples/rois/mine.json");
  test::write_file(dir / "batch.json",
                   "{\"inputs\": [\"samples/photos/\"], \"output_dir\": \"out\", \"steps\": [{\"op\": "
                   "\"roi_align\", \"rois\": \"samples/rois/mine.json\", \"config\": {\"output_height\": 8, \"output_width\": 8}, "
                   "\"output\": \"crops/{id}.png\"}]}");
  ASSERT_EQ(run_rsz(dir, "plan -i samples/photos --shards 2 -o state -q").status, 0);
  auto r = run_rsz(dir, "run batch.json --plan state --shard 0 -q");
  ASSERT_EQ(r.status, 0) << r.err;
  std::string rois = test::read_file(dir / "samples/rois/mine.json");
  rois.replace(rois.find("\"eye\""), 5, "\"cat\"");  // another label
  test::write_file(dir / "samples/rois/mine.json", rois);
  r = run_rsz(dir, "run batch.json --plan state --shard 1 -q");
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("steps[0].rois contents="), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir.path() / "state/done/00001.json"));
}

// A shard that fails an input names it in its marker, and merge says which input keeps the shard failing.
TEST(Merge, NamesTheInputsThatFailedTheirShard) {
  ScratchDir dir("merge-names");
  make_inputs(dir, 3);
  ASSERT_EQ(run_rsz(dir, "plan -i in -r --shards 1 -o state -q").status, 0);
  const std::string list = test::read_file(dir / "state/shards/00000.txt");
  const std::string first = list.substr(0, list.find_first_of("\t\n"));
  test::write_file(dir / first, "not an image");
  EXPECT_EQ(run_rsz(dir, "resample --scale 0.5 -o 'out/{relpath}{ext}' -q --plan state --shard 0").status, 1);
  const nlohmann::json marker = nlohmann::json::parse(test::read_file(dir / "state/done/00000.json"));
  ASSERT_EQ(marker["failures"].size(), 1u);
  EXPECT_EQ(marker["failures"][0]["input"], first);
  const auto r = run_rsz(dir, "merge state");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("rsz: shard 0: " + first + ": "), std::string::npos) << r.out;
  const nlohmann::json report = nlohmann::json::parse(run_rsz(dir, "merge state --json").out);
  EXPECT_EQ(report["failures"][0]["input"], first);
}

}  // namespace
}  // namespace rsz
