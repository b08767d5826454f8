// The subcommands. Each is an options struct, setup_<name>() registering its flags, and run_<name>() doing the
// work through rsz::core and rsz::io; run_<name>() returns the exit status and throws rsz::Error (Usage) for
// mistakes found before anything ran.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common.h"
#include "jobs.h"
#include "batch.h"
#include "plan_merge.h"
#include "rsz/io/batch_file.h"
#include "rsz/io/config.h"
#include "rsz/io/resize.h"

namespace rsz::app {

// The operator table: one row per operator subcommand, all the rest of the command line knows about it (cli.cpp
// registers and dispatches the subcommands from it). A new operator is its jobs (pipeline/src/<name>_jobs.cpp, and
// its batch step in pipeline/src/batch.cpp), its cmd_<name>.cpp (flags, config overlay), one row here, and one in io's
// batch-step table.
struct OperatorCommand {
  const char* command;  // the subcommand: "roi-align"
  const char* op;       // the operator in configs, batch steps and --json records: "roi_align"
  // Registers the subcommand and its flags on `app`; returns what runs it once the command line is parsed.
  std::function<std::function<int()>(CLI::App& app)> setup;
};
const std::vector<OperatorCommand>& operator_commands();

// OperatorCommand::setup for a subcommand with an options struct, its flag registration and its run function.
template <typename Options>
std::function<std::function<int()>(CLI::App&)> subcommand(void (*setup)(CLI::App&, Options&),
                                                          int (*run)(const Options&)) {
  return [setup, run](CLI::App& app) {
    auto options = std::make_shared<Options>();
    setup(app, *options);
    return std::function<int()>([options, run] { return run(*options); });
  };
}
OperatorCommand resample_command();
OperatorCommand upsample_command();
OperatorCommand roi_align_command();
OperatorCommand thumbnail_command();


struct ResampleOptions {
  CommonOptions common;
  FieldTexts fields;  // the config fields' flags (io/ops.h): --mode, --scales, --input-offsets, ...
  std::string scale;
  std::string size;
  std::int64_t width = 0;
  std::int64_t height = 0;
  std::string preset;
  std::string fit;
  std::string gravity;
  bool square_size = false;  // a plain --size N is an N x N box (thumbnail), not a width
};
void setup_resample(CLI::App& app, ResampleOptions& options);
int run_resample(const ResampleOptions& options);
// The resize intent that resample's flags and --config file say (a usage error for flags that contradict).
io::ResizeIntent resample_intent(const ResampleOptions& options);
// Runs one intent over the common options' inputs (resample and thumbnail).
int run_resize(const CommonOptions& common, const io::ResizeIntent& intent, const char* op);

// `rsz thumbnail`: resample preset for the everyday photo job: fit within a box, only shrinking unless --enlarge,
// antialiased unless --no-antialias, EXIF orientation applied and metadata kept (the common flags' defaults).
struct ThumbnailOptions {
  ResampleOptions resample;
  bool enlarge = false;
  bool no_antialias = false;
};
void setup_thumbnail(CLI::App& app, ThumbnailOptions& options);
int run_thumbnail(const ThumbnailOptions& options);

struct UpsampleOptions {
  CommonOptions common;
  FieldTexts fields;  // --mode
  std::string factor;
};
void setup_upsample(CLI::App& app, UpsampleOptions& options);
int run_upsample(const UpsampleOptions& options);

struct RoiAlignOptions {
  CommonOptions common;
  FieldTexts fields;  // --mode, --reduction, --oob-value, --input-offset, --output-offset, --align-corners
  std::string rois;
  std::string batch_indices;
  std::string output_size;
  std::string samples;
  std::string spatial_scale;
  std::string image_root;
  std::string names;
  bool allow_outside_root = false;
  bool skip_crowd = false;
  bool skip_difficult = false;
};
void setup_roi_align(CLI::App& app, RoiAlignOptions& options);
int run_roi_align(const RoiAlignOptions& options);

struct RunOptions {
  std::string batch_file;
  CommonOptions common;
};
void setup_run(CLI::App& app, RunOptions& options);
int run_run(const RunOptions& options);


void setup_plan(CLI::App& app, PlanOptions& options);
void setup_merge(CLI::App& app, MergeOptions& options);

struct InfoOptions {
  std::vector<std::string> inputs;
  bool recursive = false;
  bool json = false;
  bool no_exif = false;
  bool backends = false;
};
void setup_info(CLI::App& app, InfoOptions& options);
int run_info(const InfoOptions& options);

}  // namespace rsz::app
