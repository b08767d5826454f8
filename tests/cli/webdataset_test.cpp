// Webdataset output, end to end: -o 'wds/{shard}-{part}.tar' writes tar parts that Python's tarfile reads, members
// named by key, sorted, with fixed metadata, the same bytes as a plain run's files and whatever -j; a part that
// exists is skipped whole with --skip-existing, a part with a failed input is not written, crops carry their
// manifest row as KEY.json.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/cli_support.h"
#include "rsz/io/image.h"
#include "rsz/io/npy.h"
#include "support/test_util.h"

namespace fs = std::filesystem;

namespace rsz {
namespace {

using test::list_files;
using test::run_rsz;
using test::ScratchDir;

using test::photo;

// in/: the four sample photos and, in a sub-folder, a copy of one with dots in its name (key "sub/my_cat").
void make_inputs(const ScratchDir& dir) {
  fs::create_directories(dir.path() / "in/sub");
  for (const char* name : {"camera.png", "chelsea.png", "coffee.png", "rocket.jpg"}) {
    fs::copy_file(photo(name), dir.path() / "in" / name);
  }
  fs::copy_file(photo("chelsea.png"), dir.path() / "in/sub/my.cat.png");
}

struct Member {
  std::string name;
  std::string bytes;
};

bool operator==(const Member& a, const Member& b) { return a.name == b.name && a.bytes == b.bytes; }

// in/img00.png ...: `count` RGB PNGs of seeded noise (they hardly compress), `width` x `height`; whether made. Made
// here, not by a Python helper: the machines that run the GPU tests have no numpy or Pillow.
bool make_noise_pngs(const ScratchDir& dir, int count, int width, int height) {
  fs::create_directories(dir.path() / "in");
  for (int i = 0; i < count; ++i) {
    io::Image noise;
    noise.width = width;
    noise.height = height;
    noise.channels = 3;
    noise.bit_depth = 8;
    noise.data8.resize(static_cast<std::size_t>(width) * static_cast<std::size_t>(height) * 3);
    std::mt19937 random(static_cast<std::uint32_t>(i));
    for (auto& sample : noise.data8) sample = static_cast<std::uint8_t>(random() >> 24);
    char name[32];
    std::snprintf(name, sizeof name, "in/img%02d.png", i);
    io::write_image(dir / name, noise);
  }
  return true;
}

// Every part of `folder` as Python's tarfile reads it: its members in order, with their bytes; the metadata of every
// member is checked on the way (regular file, mode 0644, mtime 0, uid/gid 0, no user or group name).
std::map<std::string, std::vector<Member>> read_parts(const ScratchDir& dir, const std::string& folder) {
  {
    std::ofstream script(dir / "read_parts.py");
    script << "import json, os, sys, tarfile\n"
              "out = {}\n"
              "for name in sorted(os.listdir(sys.argv[1])):\n"
              "    with tarfile.open(os.path.join(sys.argv[1], name)) as t:\n"
              "        rows = []\n"
              "        for i, m in enumerate(t.getmembers()):\n"
              "            assert m.isreg() and m.mode == 0o644 and m.mtime == 0, m.name\n"
              "            assert m.uid == 0 and m.gid == 0 and m.uname == '' and m.gname == '', m.name\n"
              "            target = os.path.join(sys.argv[2], name, str(i))\n"
              "            os.makedirs(os.path.dirname(target), exist_ok=True)\n"
              "            open(target, 'wb').write(t.extractfile(m).read())\n"
              "            rows.append(m.name)\n"
              "        out[name] = rows\n"
              "print(json.dumps(out))\n";
  }
  fs::remove_all(dir.path() / "extracted");
  const auto r = test::run_shell(dir, "/usr/bin/python3 read_parts.py '" + folder + "' extracted");
  EXPECT_EQ(r.status, 0) << r.err;
  std::map<std::string, std::vector<Member>> parts;
  if (r.status != 0) return parts;
  const nlohmann::json listed = nlohmann::json::parse(r.out);
  for (const auto& [part, names] : listed.items()) {
    for (std::size_t i = 0; i < names.size(); ++i) {
      parts[part].push_back(
          {names[i].get<std::string>(), test::read_file(dir / ("extracted/" + part + "/" + std::to_string(i)))});
    }
  }
  return parts;
}

std::vector<std::string> names_of(const std::vector<Member>& members) {
  std::vector<std::string> names;
  for (const Member& m : members) names.push_back(m.name);
  return names;
}

TEST(Webdataset, PartsOfSortedKeysHoldTheBytesOfAPlainRun) {
  ScratchDir dir("wds-parts");
  make_inputs(dir);
  auto r = run_rsz(dir, "thumbnail -i in -r --size 48 -o 'wds/{shard}-{part}.tar' --tar-part-size 2 -j 2");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("wrote 3 .tar parts (5 samples)"), std::string::npos) << r.err;
  // Nothing else in the folder: no temporary file left.
  EXPECT_EQ(list_files(dir.path() / "wds"),
            (std::vector<std::string>{"00000-000000.tar", "00000-000001.tar", "00000-000002.tar"}));
  const auto parts = read_parts(dir, "wds");
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(names_of(parts.at("00000-000000.tar")), (std::vector<std::string>{"camera.png", "chelsea.png"}));
  EXPECT_EQ(names_of(parts.at("00000-000001.tar")), (std::vector<std::string>{"coffee.png", "rocket.jpg"}));
  EXPECT_EQ(names_of(parts.at("00000-000002.tar")), (std::vector<std::string>{"sub/my_cat.png"}));  // '.' made '_'

  r = run_rsz(dir, "thumbnail -i in -r --size 48 -o 'plain/{relpath}{ext}' -q");
  ASSERT_EQ(r.status, 0) << r.err;
  const std::map<std::string, std::string> plain_of = {{"camera.png", "camera.png"},
                                                       {"chelsea.png", "chelsea.png"},
                                                       {"coffee.png", "coffee.png"},
                                                       {"rocket.jpg", "rocket.jpg"},
                                                       {"sub/my_cat.png", "sub/my.cat.png"}};
  for (const auto& [part, members] : parts) {
    for (const Member& m : members) {
      ASSERT_FALSE(m.bytes.empty()) << m.name;
      EXPECT_EQ(m.bytes, test::read_file(dir / ("plain/" + plain_of.at(m.name)))) << part << " " << m.name;
    }
  }

  // --format sets the members' format; the bytes are a plain run's with the same format and quality.
  r = run_rsz(dir, "thumbnail -i in --size 48 -o 'jpg/{part}.tar' --tar-part-size 2 --format jpg --quality 70 -q");
  ASSERT_EQ(r.status, 0) << r.err;
  r = run_rsz(dir, "thumbnail -i in --size 48 -o 'plainjpg/{stem}.jpg' --quality 70 -q");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto jpgs = read_parts(dir, "jpg");
  ASSERT_EQ(jpgs.size(), 2u);
  EXPECT_EQ(names_of(jpgs.at("000000.tar")), (std::vector<std::string>{"camera.jpg", "chelsea.jpg"}));
  EXPECT_EQ(names_of(jpgs.at("000001.tar")), (std::vector<std::string>{"coffee.jpg", "rocket.jpg"}));
  for (const auto& [part, members] : jpgs) {
    for (const Member& m : members) EXPECT_EQ(m.bytes, test::read_file(dir / ("plainjpg/" + m.name))) << m.name;
  }
}

TEST(Webdataset, TheSameBytesWhateverJobsAndShardsNameTheirParts) {
  ScratchDir dir("wds-jobs");
  make_inputs(dir);
  const std::string base = "thumbnail -i in -r --size 40 --tar-part-size 2 -q ";
  ASSERT_EQ(run_rsz(dir, base + "-o 'a/{shard}-{part}.tar' -j 1").status, 0);
  ASSERT_EQ(run_rsz(dir, base + "-o 'b/{shard}-{part}.tar' -j 2").status, 0);
  const std::vector<std::string> files = list_files(dir.path() / "a");
  ASSERT_EQ(files.size(), 3u);
  EXPECT_EQ(files, list_files(dir.path() / "b"));
  for (const std::string& f : files) {
    EXPECT_EQ(test::read_file(dir / ("a/" + f)), test::read_file(dir / ("b/" + f))) << f;
  }
  // {shard} is the --shard index, 5 digits; each shard cuts its own inputs into parts.
  std::size_t samples = 0;
  for (int i = 0; i < 2; ++i) {
    const auto r = run_rsz(dir, base + "-o 's/{shard}-{part}.tar' --shard " + std::to_string(i) + "/2");
    ASSERT_EQ(r.status, 0) << r.err;
  }
  for (const auto& [part, members] : read_parts(dir, "s")) {
    EXPECT_TRUE(part.rfind("00000-", 0) == 0 || part.rfind("00001-", 0) == 0) << part;
    samples += members.size();
  }
  EXPECT_EQ(samples, 5u);
}

// With --plan, sample keys keep their folders as without it (a/x and b/x, two samples of two classes), and keys that
// become one sample key once '.' is made '_' (p.q and p_q) fall in one shard, which refuses them as one process does,
// instead of two shards each writing a sample p_q while merge reports success.
TEST(Webdataset, PlannedShardsKeepFoldersInKeysAndNeverSplitOneKey) {
  ScratchDir dir("wds-plan-keys");
  fs::create_directories(dir.path() / "in/a");
  fs::create_directories(dir.path() / "in/b");
  fs::copy_file(photo("chelsea.png"), dir.path() / "in/a/x.png");
  fs::copy_file(photo("coffee.png"), dir.path() / "in/b/x.png");
  fs::copy_file(photo("camera.png"), dir.path() / "in/a/y.png");
  for (const int shards : {1, 2, 4}) {
    const std::string st = "st" + std::to_string(shards);
    const std::string out = "wds" + std::to_string(shards);
    auto r = run_rsz(dir, "plan -i in -r --shards " + std::to_string(shards) + " -o " + st + " -q");
    ASSERT_EQ(r.status, 0) << r.err;
    for (int i = 0; i < shards; ++i) {
      r = run_rsz(dir, "thumbnail --plan " + st + " --shard " + std::to_string(i) + " --size 32 -o '" + out +
                           "/{shard}-{part}.tar' -q");
      ASSERT_EQ(r.status, 0) << r.err;
    }
    std::vector<std::string> names;
    for (const auto& [part, members] : read_parts(dir, out)) {
      for (const Member& m : members) names.push_back(m.name);
    }
    std::sort(names.begin(), names.end());
    EXPECT_EQ(names, (std::vector<std::string>{"a/x.png", "a/y.png", "b/x.png"})) << shards << " shards";
  }

  ScratchDir clash("wds-plan-clash");
  fs::create_directories(clash.path() / "in");
  fs::copy_file(photo("chelsea.png"), clash.path() / "in/p.q.png");
  fs::copy_file(photo("coffee.png"), clash.path() / "in/p_q.png");
  const auto one = run_rsz(clash, "thumbnail -i in --size 32 -o 'one/{part}.tar'");
  EXPECT_EQ(one.status, 2) << one.err;
  for (const int shards : {2, 3, 5, 8}) {
    const std::string st = "st" + std::to_string(shards);
    auto r = run_rsz(clash, "plan -i in --shards " + std::to_string(shards) + " -o " + st + " -q");
    ASSERT_EQ(r.status, 0) << r.err;
    int refused = 0;
    for (int i = 0; i < shards; ++i) {
      r = run_rsz(clash, "thumbnail --plan " + st + " --shard " + std::to_string(i) + " --size 32 -o 'wds" +
                             std::to_string(shards) + "/{shard}-{part}.tar' -q");
      EXPECT_NE(r.status, 1) << r.err;
      if (r.status == 2) {
        ++refused;
        EXPECT_NE(r.err.find("p_q"), std::string::npos) << r.err;
      }
    }
    EXPECT_EQ(refused, 1) << shards << " shards: the two inputs are in one shard, which refuses them";
    EXPECT_FALSE(fs::exists(clash.path() / ("wds" + std::to_string(shards)))) << shards << " shards";
  }
}

// A part's encoded members are inside --max-memory: those the budget cannot hold beside the largest input wait on
// disk, in an unnamed file (nothing of it is left), and the part holds the same bytes as files. 48 800 x 600 PNGs of
// noise (1.4 MB each encoded, 67 MB together) under --max-memory 20M peaked at 119 MB before.
TEST(Webdataset, APartsMembersStayInsideTheMemoryBudget) {
  ScratchDir dir("wds-budget");
  ASSERT_TRUE(make_noise_pngs(dir, 48, 800, 600));
  const std::string job = "resample -i in --scales 1,1,1,1 --max-memory 20M -j 2 -q -o ";
  const long tar_peak = test::rsz_usage(dir, job + "'wds/{part}.tar'", "ru_maxrss");
  const long files_peak = test::rsz_usage(dir, job + "'files/{stem}.png'", "ru_maxrss");
  ASSERT_GT(tar_peak, 0);
  ASSERT_GT(files_peak, 0);
  // Natively 30 MB against 17 MB (qemu-user: 53 against 40); the members held are within the 20 MB budget.
  EXPECT_LT(tar_peak, files_peak + 24 * 1024) << "KiB; the same job writing files peaked at " << files_peak << " KiB";
  EXPECT_EQ(list_files(dir.path() / "wds"), (std::vector<std::string>{"000000.tar"}));  // no spill file left
  const auto parts = read_parts(dir, "wds");
  ASSERT_EQ(parts.at("000000.tar").size(), 48u);
  for (const Member& m : parts.at("000000.tar")) EXPECT_EQ(m.bytes, test::read_file(dir / ("files/" + m.name))) << m.name;
}

// Members with UTF-8 names are written as UTF-8 whatever the locale: GNU tar lists them without a warning (a pax
// "hdrcharset=BINARY" record made it warn on every listing).
TEST(Webdataset, Utf8NamesListWithoutWarnings) {
  ScratchDir dir("wds-utf8");
  fs::create_directories(dir.path() / "in/\xc3\xa9t\xc3\xa9");
  fs::copy_file(photo("coffee.png"), dir.path() / "in/\xc3\xa9t\xc3\xa9/caf\xc3\xa9.png");
  auto r = test::run_shell(dir, std::string("LC_ALL=C '") + RSZ_BINARY + "' thumbnail -i in -r --size 16 -o 'wds/{part}.tar' -q");
  ASSERT_EQ(r.status, 0) << r.err;
  r = test::run_shell(dir, "LC_ALL=C tar -tf wds/000000.tar");
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out, "\\303\\251t\\303\\251/caf\\303\\251.png\n");
}

// A .tar run counts its output files as parts: a resumed shard's marker has parts written + parts kept, never parts
// plus samples; a part that cannot be written is "not written", not an input that failed.
TEST(Webdataset, AResumedShardCountsPartsAndAPartThatFailsIsNoFailedInput) {
  ScratchDir dir("wds-counts");
  make_inputs(dir);
  ASSERT_EQ(run_rsz(dir, "plan -i in -r --shards 1 -o state -q").status, 0);
  const std::string run = "thumbnail --plan state --shard 0 --size 24 -o 'wds/{shard}-{part}.tar' --tar-part-size 2 -q";
  ASSERT_EQ(run_rsz(dir, run).status, 0);
  fs::remove(dir.path() / "wds/00000-000001.tar");
  fs::remove(dir.path() / "state/done/00000.json");
  ASSERT_EQ(run_rsz(dir, run).status, 0);
  const nlohmann::json marker = nlohmann::json::parse(test::read_file(dir / "state/done/00000.json"));
  EXPECT_EQ(marker["written"], 1);
  EXPECT_EQ(marker["kept"], 2);
  EXPECT_EQ(marker["outputs"], 3);
  EXPECT_EQ(marker["failed"], 0);

  // A file where a part's folder goes: that part cannot be written. (A folder where a part goes is refused before
  // anything is written, as for any output.)
  fs::create_directories(dir.path() / "blocked");
  test::write_file(dir / "blocked/000001", "a file");
  const auto r = run_rsz(dir, "thumbnail -i in -r --size 24 -o 'blocked/{part}/p.tar' --tar-part-size 2");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("wrote 2 .tar parts (3 samples)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("; 1 not written"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("inputs failed"), std::string::npos) << r.err;
  fs::create_directories(dir.path() / "folder/000001.tar");
  const auto refused = run_rsz(dir, "thumbnail -i in -r --size 24 -o 'folder/{part}.tar' --tar-part-size 2");
  EXPECT_EQ(refused.status, 2) << refused.err;
  EXPECT_NE(refused.err.find("folder/000001.tar: the output is an existing folder"), std::string::npos) << refused.err;
  EXPECT_FALSE(fs::exists(dir.path() / "folder/000000.tar"));
}

TEST(Webdataset, ARerunWritesOnlyThePartThatIsMissing) {
  ScratchDir dir("wds-resume");
  make_inputs(dir);
  const std::string run = "thumbnail -i in -r --size 40 -o 'wds/{part}.tar' --tar-part-size 2 --skip-existing";
  ASSERT_EQ(run_rsz(dir, run + " -q").status, 0);
  const std::string before = test::read_file(dir / "wds/000001.tar");
  const auto old_time = fs::file_time_type::clock::now() - std::chrono::hours(24 * 365);
  fs::last_write_time(dir / "wds/000000.tar", old_time);
  fs::last_write_time(dir / "wds/000002.tar", old_time);
  fs::remove(dir / "wds/000001.tar");
  const auto r = run_rsz(dir, run);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("wrote 1 .tar part (2 samples)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("skipped 2 parts whose file exists"), std::string::npos) << r.err;
  EXPECT_EQ(test::read_file(dir / "wds/000001.tar"), before);
  EXPECT_EQ(fs::last_write_time(dir / "wds/000000.tar"), old_time);
  EXPECT_EQ(fs::last_write_time(dir / "wds/000002.tar"), old_time);
}

TEST(Webdataset, APartWithAFailedInputIsNotWrittenTheOthersAre) {
  ScratchDir dir("wds-failure");
  make_inputs(dir);
  // coffee.png (part 1 with rocket.jpg) cut short: it fails as it is decoded.
  const std::string whole = test::read_file(photo("coffee.png"));
  std::ofstream(dir / "in/coffee.png", std::ios::binary | std::ios::trunc) << whole.substr(0, 300);
  const auto r = run_rsz(dir, "thumbnail -i in -r --size 40 -o 'wds/{part}.tar' --tar-part-size 2 -j 2");
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("in/coffee.png"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("wds/000001.tar: not written: 1 of its 2 inputs failed"), std::string::npos) << r.err;
  // No partial file and no temporary one: the other parts only.
  EXPECT_EQ(list_files(dir.path() / "wds"), (std::vector<std::string>{"000000.tar", "000002.tar"}));
  const auto parts = read_parts(dir, "wds");
  EXPECT_EQ(names_of(parts.at("000000.tar")), (std::vector<std::string>{"camera.png", "chelsea.png"}));
  EXPECT_EQ(names_of(parts.at("000002.tar")), (std::vector<std::string>{"sub/my_cat.png"}));
}

// The parts' inputs run together (the next parts' while a part's last ones finish and it is written), and the parts
// still end in order, each whole or not at all: many small parts under a budget that sends members to disk, with an
// input that fails as it is decoded, hold the same bytes with -j 1 and -j 2 (one part a sample, and three), the part
// of the failed input alone not written, and no spill or temporary file left.
TEST(Webdataset, PartsRunTogetherAndEndInOrderWholeOrNotAtAll) {
  ScratchDir dir("wds-overlap");
  ASSERT_TRUE(make_noise_pngs(dir, 12, 400, 300));
  const std::string whole = test::read_file(dir / "in/img07.png");
  std::ofstream(dir / "in/img07.png", std::ios::binary | std::ios::trunc) << whole.substr(0, 20000);
  for (const int size : {1, 3}) {
    std::map<std::string, std::vector<Member>> first;
    for (const int jobs : {1, 2}) {
      const std::string out = "wds" + std::to_string(size) + "_" + std::to_string(jobs);
      const auto r = run_rsz(dir, "resample -i in --scales 1,1,1,1 --max-memory 4M -o '" + out +
                                      "/{part}.tar' --tar-part-size " + std::to_string(size) + " -j " +
                                      std::to_string(jobs) + " -q");
      EXPECT_EQ(r.status, 1) << r.err;
      const std::string failed = size == 1 ? "000007.tar" : "000002.tar";  // img07's part
      EXPECT_NE(r.err.find(out + "/" + failed + ": not written: 1 of its " + std::to_string(size) + " inputs failed"),
                std::string::npos)
          << r.err;
      std::vector<std::string> expected;
      for (int part = 0; part < 12 / size; ++part) {
        char name[16];
        std::snprintf(name, sizeof name, "%06d.tar", part);
        if (name != failed) expected.push_back(name);
      }
      EXPECT_EQ(list_files(dir.path() / out), expected) << out;  // nothing else: no spill, no temporary file
      const auto parts = read_parts(dir, out);
      EXPECT_EQ(parts.size(), expected.size()) << out;
      for (const auto& [part, members] : parts) {
        EXPECT_EQ(members.size(), static_cast<std::size_t>(size)) << out << "/" << part;
        for (const Member& m : members) {
          EXPECT_GT(m.bytes.size(), 300u * 400u) << m.name;  // noise: the PNG holds at least its samples
        }
      }
      if (jobs == 1) {
        first = parts;
      } else {
        EXPECT_TRUE(parts == first) << out << ": the parts differ from -j 1's";
      }
    }
  }
}

TEST(Webdataset, CropsAreKeyedBySourceAndIdWithTheirManifestRow) {
  ScratchDir dir("wds-crops");
  dir.copy_project_files();
  const std::string crops = "roi-align --rois samples/annotations/coco.json --image-root samples/photos "
                            "--output-size 24x24 ";
  auto r = run_rsz(dir, crops + "-o 'wds/{part}.tar' --tar-part-size 2");
  ASSERT_EQ(r.status, 0) << r.err;
  // An image's crops are never split: chelsea's 3 crops fill part 0, coffee's 2 part 1.
  const auto parts = read_parts(dir, "wds");
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(names_of(parts.at("000000.tar")),
            (std::vector<std::string>{"chelsea/101.json", "chelsea/101.png", "chelsea/102.json", "chelsea/102.png",
                                      "chelsea/103.json", "chelsea/103.png"}));
  EXPECT_EQ(names_of(parts.at("000001.tar")),
            (std::vector<std::string>{"coffee/104.json", "coffee/104.png", "coffee/105.json", "coffee/105.png"}));
  r = run_rsz(dir, crops + "-o 'plain/{id}.png' --manifest m.jsonl -q");
  ASSERT_EQ(r.status, 0) << r.err;
  std::map<std::string, nlohmann::json> rows;  // by id
  std::istringstream lines(test::read_text(dir.path() / "m.jsonl"));
  for (std::string line; std::getline(lines, line);) {
    const nlohmann::json row = nlohmann::json::parse(line);
    rows[row["id"].get<std::string>()] = row;
  }
  ASSERT_EQ(rows.size(), 5u);
  std::size_t checked = 0;
  for (const auto& [part, members] : parts) {
    for (const Member& m : members) {
      const std::string key = m.name.substr(0, m.name.find('.'));
      const std::string id = key.substr(key.find('/') + 1);
      if (m.name.size() > 5 && m.name.substr(m.name.size() - 5) == ".json") {
        const nlohmann::json row = nlohmann::json::parse(m.bytes);
        nlohmann::json expected = rows.at(id);
        expected["crop"] = key + ".png";  // the image member, where the manifest names the file
        EXPECT_EQ(row, expected) << m.name;
        EXPECT_EQ(row["source"], "samples/photos/" + key.substr(0, key.find('/')) + ".png");
        EXPECT_EQ(row["box"].size(), 4u);
        EXPECT_FALSE(row["label"].get<std::string>().empty());
        ++checked;
      } else {
        EXPECT_EQ(m.bytes, test::read_file(dir / ("plain/" + id + ".png"))) << m.name;
      }
    }
  }
  EXPECT_EQ(checked, 5u);
}

TEST(Webdataset, RequestsThatCannotBeMetAreUsageErrors) {
  ScratchDir dir("wds-usage");
  make_inputs(dir);
  fs::copy_file(photo("rocket.jpg"), dir.path() / "in/camera.jpg");  // key "camera" twice
  const auto expect_usage = [&](const std::string& args, const std::string& words) {
    const auto r = run_rsz(dir, args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.err;
    EXPECT_NE(r.err.find(words), std::string::npos) << args << "\n" << r.err;
    EXPECT_FALSE(fs::exists(dir.path() / "wds")) << args;
  };
  expect_usage("thumbnail -i in/rocket.jpg --size 40 -o wds/all.tar", "put {part} in its name");
  expect_usage("thumbnail -i in/rocket.jpg --size 40 -o 'wds/{stem}-{part}.tar'", "takes {part}");
  expect_usage("thumbnail -i in/rocket.jpg --size 40 -o wds/ --tar-part-size 5", "goes with a .tar output");
  expect_usage("thumbnail -i in/rocket.jpg --size 40 -o 'wds/{part}.tar' --format npy", "are images");
  expect_usage("thumbnail -i in --size 40 -o 'wds/{part}.tar'", "two samples would get the key 'camera'");
  // A .npy input would be a tensor member: refused before anything runs, --dry-run included (it failed at write
  // time, taking its part's other members with it).
  io::write_npy(dir / "t.npy", test::random_f32({1, 3, 8, 8}, 3).view());
  for (const char* dry : {"", " --dry-run"}) {
    expect_usage(std::string("resample -i t.npy -i in/rocket.jpg --scales 1,1,0.5,0.5 -o 'wds/{part}.tar'") + dry,
                 "t.npy: a tensor (.npy) cannot be a member");
  }
}

}  // namespace
}  // namespace rsz
