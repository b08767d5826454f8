// rsz::pipeline::run and plan (rsz/pipeline.h): a job over files from C++, checked against the rsz program's own
// outputs (the same bytes), with its report's records, codes and refusals.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli/cli_support.h"
#include "rsz/io/batch_file.h"
#include "rsz/io/image.h"
#include "rsz/pipeline.h"
#include "support/test_util.h"

namespace fs = std::filesystem;
using rsz::pipeline::RecordKind;
using rsz::test::photo;
using rsz::test::run_rsz;
using rsz::test::ScratchDir;

namespace {

rsz::pipeline::Request thumbnail_request(const std::string& inputs, const std::string& output, const char* size) {
  rsz::pipeline::Request r;
  r.op = "thumbnail";
  rsz::io::ResizeIntent intent;
  intent.box = rsz::io::parse_size(size, "size", true);
  rsz::io::apply_thumbnail_defaults(intent, false);
  r.config = intent;
  r.inputs = {inputs};
  r.output = output;
  return r;
}

void copy_photos(const ScratchDir& dir) {
  fs::create_directories(dir.path() / "in/sub");
  fs::copy_file(photo("chelsea.png"), dir / "in/chelsea.png");
  fs::copy_file(photo("rocket.jpg"), dir / "in/sub/rocket.jpg");
}

}  // namespace

TEST(Library, RunWritesWhatTheProgramWritesAndReportsEachOutput) {
  ScratchDir dir("lib-run");
  copy_photos(dir);
  auto r = run_rsz(dir, "thumbnail -r -i in -o 'cli/{relpath}.jpg' --size 40 --quality 80 -q");
  ASSERT_EQ(r.status, 0) << r.err;
  rsz::pipeline::Request request = thumbnail_request(dir / "in", dir / "lib/{relpath}.jpg", "40");
  request.settings = {{"recursive", "true"}, {"quality", "80"}};
  const rsz::pipeline::Report report = rsz::pipeline::run(request);
  ASSERT_EQ(report.status, 0) << report.error;
  EXPECT_EQ((std::vector<std::size_t>{report.jobs, report.written, report.failed, report.skipped}),
            (std::vector<std::size_t>{2, 2, 0, 0}));
  for (const char* name : {"chelsea.jpg", "sub/rocket.jpg"}) {
    EXPECT_EQ(rsz::test::read_file(dir / (std::string("lib/") + name)),
              rsz::test::read_file(dir / (std::string("cli/") + name)))
        << name;
  }
  ASSERT_EQ(report.records.size(), 2u);
  std::set<std::string> outputs;
  for (const rsz::pipeline::Record& rec : report.records) {
    EXPECT_EQ(rec.kind, RecordKind::Written);
    EXPECT_EQ(rec.op, "thumbnail");
    EXPECT_EQ(rec.dtype, "float32");  // the operator's result, as --json says
    EXPECT_EQ(rec.shape.size(), 4u);
    outputs.insert(rec.output);
  }
  EXPECT_EQ(outputs, (std::set<std::string>{dir / "lib/chelsea.jpg", dir / "lib/sub/rocket.jpg"}));
  EXPECT_TRUE(report.messages.empty());  // quiet unless asked: the report says it all
  // Run again with skip_existing: kept, not written; records of kind Skipped.
  request.settings["skip_existing"] = "true";
  const rsz::pipeline::Report again = rsz::pipeline::run(request);
  EXPECT_EQ(again.status, 0);
  EXPECT_EQ(again.skipped, 2u);
  EXPECT_EQ(again.written, 0u);
  ASSERT_EQ(again.records.size(), 2u);
  EXPECT_EQ(again.records[0].kind, RecordKind::Skipped);
}

TEST(Library, AFailedInputIsARecordWithItsCodeAndTheOthersRun) {
  ScratchDir dir("lib-fail");
  copy_photos(dir);
  rsz::test::write_file(dir / "in/broken.png", "not a PNG at all");
  rsz::pipeline::Request request = thumbnail_request(dir / "in", dir / "out/", "24");
  request.settings = {{"quiet", "false"}};
  const rsz::pipeline::Report report = rsz::pipeline::run(request);
  EXPECT_EQ(report.status, 1);
  EXPECT_EQ(report.failed, 1u);
  EXPECT_EQ(report.written, 1u);  // not recursive: chelsea.png only
  ASSERT_EQ(report.failures.size(), 1u);
  const rsz::pipeline::Record& f = report.failures[0];
  EXPECT_EQ(f.kind, RecordKind::Failed);
  EXPECT_EQ(f.input, dir / "in/broken.png");
  EXPECT_EQ(f.code, rsz::ErrorCode::Format);
  EXPECT_EQ(f.message.rfind(f.input + ": ", 0), 0u) << f.message;
  EXPECT_EQ(rsz::pipeline::record_json(f),
            nlohmann::json({{"input", f.input}, {"op", "thumbnail"}, {"error", f.message}, {"code", "format"}}).dump());
  ASSERT_EQ(report.messages.size(), 2u);  // the failure and the summary, as the program says them
  EXPECT_EQ(report.messages[0], f.message);
  EXPECT_EQ(report.messages[1], "1 of 2 inputs failed; 1 file written");
}

TEST(Library, RefusalsWriteNothingAndSayWhy) {
  ScratchDir dir("lib-refuse");
  copy_photos(dir);
  const auto refused = [&](rsz::pipeline::Request request, const std::string& expected) {
    const rsz::pipeline::Report report = rsz::pipeline::run(request);
    EXPECT_EQ(report.status, 2) << expected;
    EXPECT_EQ(report.error_code, rsz::ErrorCode::InvalidArgument) << report.error;
    EXPECT_NE(report.error.find(expected), std::string::npos) << report.error;
    EXPECT_FALSE(fs::exists(dir.path() / "out")) << expected;
  };
  const rsz::pipeline::Request base = thumbnail_request(dir / "in", dir / "out/", "24");
  auto r = base;
  r.settings = {{"qualty", "80"}};
  refused(r, "settings: \"qualty\" is not a run-level setting; dtype, jobs");
  r.settings = {{"strict", "yes"}};
  refused(r, "settings: \"strict\" = \"yes\": true or false is allowed");
  r.settings = {{"quality", "101"}};
  refused(r, "101");
  r.settings = {{"plan", "state"}};
  refused(r, "a plan's shard runs from a request naming its command");
  r.settings = {{"depth", "12"}};
  refused(r, "one of 8, 16 is allowed");
  r = base;
  r.op = "upsample2d";
  r.settings = {{"shrink_on_load", "true"}};
  refused(r, "settings: \"shrink_on_load\" is not taken by upsample2d");
  r = base;
  r.output = "";
  refused(r, "output: required");
  r = base;
  r.inputs = {"-"};
  refused(r, "standard input is the command line's");
  r = base;
  r.op = "resize";
  refused(r, "op \"resize\": resample, thumbnail, upsample2d or roi_align is allowed");
  r = base;
  r.op = "roi_align";
  refused(r, "config: not the config of roi_align");
  r = base;
  r.output = dir / "out/same.png";  // two inputs into one file
  r.settings = {{"recursive", "true"}};
  refused(r, "same.png");
}

TEST(Library, PlanListsThePlannedCallsAndWritesNothing) {
  ScratchDir dir("lib-plan");
  copy_photos(dir);
  rsz::pipeline::Request request = thumbnail_request(dir / "in/chelsea.png", dir / "out/", "32");
  const rsz::pipeline::Plan planned = rsz::pipeline::plan(request);
  const rsz::pipeline::Report& report = planned.report;
  ASSERT_EQ(report.status, 0) << report.error;
  EXPECT_EQ(report.jobs, 1u);
  ASSERT_EQ(report.records.size(), 1u);
  const rsz::pipeline::Record& p = report.records[0];
  EXPECT_EQ(p.kind, RecordKind::Planned);
  EXPECT_EQ(p.output, dir / "out/chelsea.png");
  EXPECT_EQ(p.shape, (std::vector<std::int64_t>{1, 3, 21, 32}));
  const nlohmann::json plan = nlohmann::json::parse("{" + p.plan + "}");
  EXPECT_EQ(plan["resize"]["input_sizes"], nlohmann::json({1, 3, 300, 451}));
  EXPECT_EQ(plan["resize"]["antialiased"], true);
  EXPECT_FALSE(fs::exists(dir.path() / "out"));
  // The program's --dry-run --json says the same plan.
  auto r = run_rsz(dir, "thumbnail -i in/chelsea.png -o out/ --size 32 --dry-run --json");
  ASSERT_EQ(r.status, 0) << r.err;
  nlohmann::json line = nlohmann::json::parse(r.out);
  nlohmann::json mine = nlohmann::json::parse(rsz::pipeline::record_json(p));
  line.erase("output");
  mine.erase("output");
  line.erase("input");
  mine.erase("input");
  EXPECT_EQ(mine, line);
}

TEST(Library, APlanRunsAsPlannedOnce) {
  ScratchDir dir("lib-plan-run");
  copy_photos(dir);
  fs::copy_file(photo("chelsea.png"), dir / "in/gone.png");
  rsz::pipeline::Request request = thumbnail_request(dir / "in", dir / "lib/{relpath}.jpg", "40");
  request.settings = {{"recursive", "true"}, {"quality", "80"}};
  const rsz::pipeline::Plan planned = rsz::pipeline::plan(request);
  ASSERT_EQ(planned.report.status, 0) << planned.report.error;
  EXPECT_TRUE(planned.runnable());
  ASSERT_EQ(planned.report.records.size(), 3u);
  for (const rsz::pipeline::Record& rec : planned.report.records) EXPECT_EQ(rec.kind, RecordKind::Planned);
  EXPECT_FALSE(fs::exists(dir.path() / "lib"));
  // Between planning and running: an input removed, a file added to the folder. The plan's inputs run (the folder is
  // not listed again): the new file is not one of them, the removed one fails alone.
  fs::remove(dir / "in/gone.png");
  fs::copy_file(photo("rocket.jpg"), dir / "in/late.jpg");
  const rsz::pipeline::Plan copy = planned;  // copies share the one planned run
  const rsz::pipeline::Report report = rsz::pipeline::run(copy);
  EXPECT_EQ(report.status, 1);
  EXPECT_EQ((std::vector<std::size_t>{report.jobs, report.written, report.failed}),
            (std::vector<std::size_t>{3, 2, 1}));
  ASSERT_EQ(report.failures.size(), 1u);
  EXPECT_EQ(report.failures[0].input, dir / "in/gone.png");
  EXPECT_EQ(report.failures[0].code, rsz::ErrorCode::Io);
  EXPECT_FALSE(fs::exists(dir.path() / "lib/late.jpg"));
  auto r = run_rsz(dir, "thumbnail -r -i in/chelsea.png -i in/sub -o 'cli/{relpath}.jpg' --size 40 --quality 80 -q");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(rsz::test::read_file(dir / "lib/chelsea.jpg"), rsz::test::read_file(dir / "cli/chelsea.jpg"));
  EXPECT_EQ(rsz::test::read_file(dir / "lib/sub/rocket.jpg"), rsz::test::read_file(dir / "cli/rocket.jpg"));
  // A plan runs once; an empty Plan and a refused one do not run.
  EXPECT_FALSE(planned.runnable());
  const rsz::pipeline::Report again = rsz::pipeline::run(planned);
  EXPECT_EQ(again.status, 2);
  EXPECT_NE(again.error.find("ran already"), std::string::npos) << again.error;
  EXPECT_EQ(rsz::pipeline::run(rsz::pipeline::Plan{}).status, 2);
  request.settings["quality"] = "101";
  const rsz::pipeline::Plan refused = rsz::pipeline::plan(request);
  EXPECT_EQ(refused.report.status, 2);
  EXPECT_FALSE(refused.runnable());
  EXPECT_EQ(rsz::pipeline::run(refused).error, refused.report.error);
}

TEST(Library, AnInputChangedSinceItWasPlannedIsPlannedAgainWithItsChecks) {
  ScratchDir dir("lib-plan-changed");
  fs::create_directories(dir.path() / "in");
  fs::copy_file(photo("chelsea.png"), dir / "in/a.png");
  fs::copy_file(photo("chelsea.png"), dir / "in/b.png");
  auto r = run_rsz(dir, "resample -i in/a.png -o big.png --scale 10 --mode nearest -q");  // 4510 x 3000
  ASSERT_EQ(r.status, 0) << r.err;
  rsz::pipeline::Request request;
  request.command = "resample";
  request.options = {{"scale", "0.5"}};
  request.inputs = {dir / "in"};
  request.output = dir / "out/";
  request.settings = {{"max_memory", "8M"}};
  const rsz::pipeline::Plan planned = rsz::pipeline::plan(request);
  ASSERT_EQ(planned.report.status, 0) << planned.report.error;
  ASSERT_EQ(planned.report.records.size(), 2u);
  EXPECT_EQ(planned.report.records[1].shape, (std::vector<std::int64_t>{1, 3, 150, 225}));
  // a.png now over the budget of the plan; b.png another photo: planned again as it runs.
  fs::copy_file(dir / "big.png", dir / "in/a.png", fs::copy_options::overwrite_existing);
  fs::copy_file(photo("coffee.png"), dir / "in/b.png", fs::copy_options::overwrite_existing);
  const rsz::pipeline::Report report = rsz::pipeline::run(planned);
  EXPECT_EQ(report.status, 1);
  ASSERT_EQ(report.failures.size(), 1u);
  EXPECT_EQ(report.failures[0].input, dir / "in/a.png");
  EXPECT_NE(report.failures[0].message.find("memory budget"), std::string::npos) << report.failures[0].message;
  EXPECT_FALSE(fs::exists(dir.path() / "out/a.png"));
  ASSERT_EQ(report.written, 1u);
  const rsz::io::ImageInfo b = rsz::io::read_image_info(dir / "out/b.png");
  EXPECT_EQ((std::vector<std::int64_t>{b.width, b.height}), (std::vector<std::int64_t>{300, 200}));
}

TEST(Library, APlanSaysItsFailedInputsAndADryRunWritesNothing) {
  ScratchDir dir("lib-plan-failed");
  copy_photos(dir);
  rsz::test::write_file(dir / "in/bad.png", "not a png");
  rsz::pipeline::Request request = thumbnail_request(dir / "in", dir / "lib/", "20");
  const rsz::pipeline::Plan planned = rsz::pipeline::plan(request);
  EXPECT_EQ(planned.report.status, 1);
  EXPECT_EQ(planned.report.failed, 1u);
  ASSERT_EQ(planned.report.failures.size(), 1u);
  EXPECT_EQ(planned.report.failures[0].input, dir / "in/bad.png");
  EXPECT_EQ(planned.report.failures[0].code, rsz::ErrorCode::Format);
  ASSERT_EQ(planned.report.messages.size(), 1u);
  EXPECT_EQ(planned.report.messages[0], planned.report.failures[0].message);
  const rsz::pipeline::Report report = rsz::pipeline::run(planned);
  EXPECT_EQ(report.status, 1);
  EXPECT_EQ(report.written, 1u);
  EXPECT_TRUE(fs::exists(dir.path() / "lib/chelsea.png"));
  // With dry_run, running the plan writes nothing: it is the plan's view.
  request.output = dir / "dry/";
  request.settings["dry_run"] = "true";
  const rsz::pipeline::Plan dry = rsz::pipeline::plan(request);
  EXPECT_FALSE(dry.runnable());
  const rsz::pipeline::Report viewed = rsz::pipeline::run(dry);
  EXPECT_EQ(viewed.status, 1);
  EXPECT_EQ(viewed.written, 0u);
  ASSERT_EQ(viewed.records.size(), 2u);
  EXPECT_EQ(viewed.records[1].kind, RecordKind::Planned);
  EXPECT_FALSE(fs::exists(dir.path() / "dry"));
}

TEST(Library, ABatchFilesStepRunsAsRszRunRunsIt) {
  ScratchDir dir("lib-batch");
  copy_photos(dir);
  const std::string json = R"({"inputs": ["in/chelsea.png"], "output_dir": "cli", "quality": 70,
    "steps": [{"op": "resample", "config": {"size": "50%", "interpolation": "nearest"}}]})";
  rsz::test::write_file(dir / "b.json", json);
  auto r = run_rsz(dir, "run b.json -q");
  ASSERT_EQ(r.status, 0) << r.err;
  const rsz::io::BatchFile batch = rsz::io::parse_batch_file(json, "b.json", dir.path().string());
  rsz::pipeline::Request request = rsz::pipeline::request_of(batch.steps.at(0));
  request.inputs = batch.inputs;
  request.output = dir / "lib/{stem}_{op}{ext}";
  for (const auto& [key, text] : batch.settings) request.settings[key] = text;
  const rsz::pipeline::Report report = rsz::pipeline::run(request);
  ASSERT_EQ(report.status, 0) << report.error;
  EXPECT_EQ(rsz::test::read_file(dir / "lib/chelsea_resample.png"),
            rsz::test::read_file(dir / "cli/chelsea_resample.png"));
}

TEST(Library, RunsOfSeveralThreadsGiveTheBytesOfOneAfterAnother) {
  ScratchDir dir("lib-threads");
  copy_photos(dir);
  const auto request = [&](const std::string& out) {
    rsz::pipeline::Request r = thumbnail_request(dir / "in", dir / (out + "/{relpath}.png"), "30");
    r.settings = {{"recursive", "true"}, {"jobs", "2"}};
    return r;
  };
  ASSERT_EQ(rsz::pipeline::run(request("one")).status, 0);
  std::vector<rsz::pipeline::Report> reports(4);
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] { reports[i] = rsz::pipeline::run(request("t" + std::to_string(i))); });
  }
  for (auto& t : threads) t.join();
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(reports[i].status, 0) << reports[i].error;
    EXPECT_EQ(reports[i].written, 2u);
    for (const char* name : {"chelsea.png", "sub/rocket.png"}) {
      EXPECT_EQ(rsz::test::read_file(dir / ("t" + std::to_string(i) + "/" + name)),
                rsz::test::read_file(dir / (std::string("one/") + name)));
    }
  }
}

TEST(Library, ARequestByCommandTakesTheFlagsVocabularyAndRunsAPlansShards) {
  ScratchDir dir("lib-command");
  copy_photos(dir);
  auto cli = run_rsz(dir, "roi-align -i in/chelsea.png --rois boxes.json --output-size 12x8 --samples 2:3 "
                          "--reduction max -o 'cli/{index}.png' -q");
  // The boxes are written after the first call, which fails on their absence: a refusal, nothing written.
  EXPECT_EQ(cli.status, 2);
  rsz::test::write_file(dir / "boxes.json", "{\"rois\": [[3, 4, 40, 30], [10, 10, 90, 70]]}");
  cli = run_rsz(dir, "roi-align -i in/chelsea.png --rois boxes.json --output-size 12x8 --samples 2:3 "
                     "--reduction max -o 'cli/{index}.png' -q");
  ASSERT_EQ(cli.status, 0) << cli.err;
  rsz::pipeline::Request request;
  request.command = "roi-align";
  request.options = {{"rois", dir / "boxes.json"}, {"output_size", "12x8"}, {"samples", "2:3"}, {"reduction", "max"}};
  request.inputs = {dir / "in/chelsea.png"};
  request.output = dir / "lib/{index}.png";
  const rsz::pipeline::Report report = rsz::pipeline::run(request);
  ASSERT_EQ(report.status, 0) << report.error;
  ASSERT_EQ(report.written, 2u);
  for (const char* name : {"0.png", "1.png"}) {
    EXPECT_EQ(rsz::test::read_file(dir / (std::string("lib/") + name)),
              rsz::test::read_file(dir / (std::string("cli/") + name)));
  }
  // Refusals in the flags' words, nothing written: an unknown option, options that exclude each other, a required one
  // missing, text a choice does not allow, an op beside a command.
  const std::pair<std::map<std::string, std::string>, std::string> refused[] = {
      {{{"size", "8"}, {"sizee", "3"}}, "\"sizee\" is not an option of thumbnail"},
      {{{"fit", "cover"}}, "--size is required"},
      {{{"size", "8"}, {"fit", "sideways"}}, "--fit sideways: one of"},
      {{{"size", "8"}, {"enlarge", "yes"}}, "--enlarge yes: true or false is allowed"},
  };
  for (const auto& [options, message] : refused) {
    rsz::pipeline::Request bad;
    bad.command = "thumbnail";
    bad.options = options;
    bad.inputs = {dir / "in"};
    bad.output = dir / "no/";
    const rsz::pipeline::Report r = rsz::pipeline::run(bad);
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.error.find(message), std::string::npos) << r.error;
  }
  rsz::pipeline::Request both;
  both.command = "resample";
  both.options = {{"scale", "0.5"}, {"size", "8x8"}};
  both.inputs = {dir / "in"};
  both.output = dir / "no/";
  EXPECT_NE(rsz::pipeline::run(both).error.find("--scale excludes --size"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir / "no"));
  // A plan, its shards run by requests, the program's run of a shard then done already (the same pinned parameters),
  // other parameters refused.
  rsz::pipeline::PlanRequest plan;
  plan.inputs = {dir / "in"};
  plan.state = dir / "state";
  plan.shards = 2;
  plan.recursive = true;
  ASSERT_EQ(rsz::pipeline::make_plan(plan).status, 0);
  EXPECT_EQ(rsz::pipeline::make_plan(plan).status, 2);  // the folder is no longer empty
  for (int shard = 0; shard < 2; ++shard) {
    rsz::pipeline::Request part;
    part.command = "thumbnail";
    part.options = {{"size", "16"}};
    part.settings = {{"plan", dir / "state"}, {"shard", std::to_string(shard)}, {"quality", "70"}};
    part.output = dir / "sh/{stem}.jpg";
    const rsz::pipeline::Report r = rsz::pipeline::run(part);
    EXPECT_EQ(r.status, 0) << r.error;
  }
  EXPECT_TRUE(fs::exists(dir / "sh/chelsea.jpg") && fs::exists(dir / "sh/rocket.jpg"));
  auto again = run_rsz(dir, "thumbnail --plan state --shard 1 --size 16 --quality 70 -o '" + (dir / "sh/{stem}.jpg") + "'");
  EXPECT_EQ(again.status, 0);
  EXPECT_NE(again.err.find("is done already"), std::string::npos) << again.err;
  auto other = run_rsz(dir, "thumbnail --plan state --shard 1 --size 16 --quality 71 -o '" + (dir / "sh/{stem}.jpg") + "'");
  EXPECT_EQ(other.status, 2);
  EXPECT_NE(other.err.find("quality=71 here, quality=70 there"), std::string::npos) << other.err;
  // merge: the object rsz merge --json prints (its times aside), every shard done.
  rsz::pipeline::MergeRequest merge_request;
  merge_request.state = dir / "state";
  const rsz::pipeline::MergeResult merged = rsz::pipeline::merge(merge_request);
  EXPECT_EQ(merged.report.status, 0) << merged.report.error;
  auto cli_merge = run_rsz(dir, "merge state --json");
  ASSERT_EQ(cli_merge.status, 0) << cli_merge.err;
  const nlohmann::json mine = nlohmann::json::parse(merged.json);
  EXPECT_EQ(mine, nlohmann::json::parse(cli_merge.out));
  EXPECT_EQ(mine["rerun"], "");
  EXPECT_EQ(mine["done"], 2);
  merge_request.state = dir / "no-plan-here";
  const rsz::pipeline::MergeResult no_plan = rsz::pipeline::merge(merge_request);
  EXPECT_EQ(no_plan.report.status, 2);
  EXPECT_TRUE(no_plan.json.empty());
  EXPECT_NE(no_plan.report.error.find("no-plan-here"), std::string::npos) << no_plan.report.error;
  // A command named by its operator ("upsample2d") pins the command's name, as the program does; a Bool option
  // "false" is the option not given.
  plan.state = dir / "state2";
  plan.shards = 1;
  ASSERT_EQ(rsz::pipeline::make_plan(plan).status, 0);
  rsz::pipeline::Request up;
  up.command = "upsample2d";
  up.options = {{"factor", "2"}};
  up.settings = {{"plan", dir / "state2"}, {"shard", "0"}};
  up.output = dir / "up/";
  ASSERT_EQ(rsz::pipeline::run(up).status, 0);
  auto done = run_rsz(dir, "upsample --plan state2 --shard 0 --factor 2 -o '" + (dir / "up/") + "'");
  EXPECT_EQ(done.status, 0);
  EXPECT_NE(done.err.find("is done already"), std::string::npos) << done.err;
  rsz::pipeline::Request unflagged;
  unflagged.command = "thumbnail";
  unflagged.options = {{"size", "8"}, {"enlarge", "false"}};
  unflagged.inputs = {dir / "in/chelsea.png"};
  unflagged.output = dir / "small.png";
  EXPECT_EQ(rsz::pipeline::run(unflagged).status, 0);
}
