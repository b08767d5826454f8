// The subcommands: the operators' from the pipeline's command table (operator_commands), and run, plan, merge and
// info, each an options struct, setup_<name>() registering its flags, and run_<name>() calling the pipeline;
// run_<name>() returns the exit status and throws rsz::Error (Usage) for mistakes found before anything ran.
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

namespace rsz::app {

// The operator subcommands, one per row of the pipeline's command table (rsz/pipeline/commands.h), in the order
// `rsz --help` lists them: cli.cpp registers and dispatches them from here (operator_commands.cpp). A new operator is
// its jobs (pipeline/src/<name>_jobs.cpp, and its batch step in pipeline/src/batch.cpp), its row of the command
// table with the reading of its options (pipeline/src/commands.cpp), and one in io's batch-step table.
struct OperatorCommand {
  std::string command;  // the subcommand: "roi-align"
  std::string op;       // the operator in configs, batch steps and --json records: "roi_align"
  // Registers the subcommand and its flags on `app`; returns what runs it once the command line is parsed (as shard I
  // of a plan with --plan).
  std::function<std::function<int()>(CLI::App& app)> setup;
};
const std::vector<OperatorCommand>& operator_commands();

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
