// A command's run as shard I of a plan (--plan STATE --shard I): the parameters pinned, a finished shard's marker.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "pipeline.h"

namespace rsz::app {

// What a command was given, as --plan pins it: its options and run-level settings by their flags' long names
// ("size", "output-size", "quality", "output") with their text, the files whose contents decide the outputs by the
// same names ("config", "rois", "names", "batch-indices", "batch"), and rsz run's batch file.
struct PinnedCommand {
  std::string command;  // "thumbnail", "run"
  std::vector<std::pair<std::string, std::string>> given;
  std::vector<std::pair<std::string, std::string>> files;
  std::string output;  // -o ("" for a batch file's output folder)
  std::string batch;   // rsz run's batch file
};

// Runs `run` as the command's shard: with common.plan (not --dry-run), refuses parameters other than the ones pinned
// in STATE/params.json, returns 0 at once when STATE/done/0000I.json says the shard is done with these parameters and
// list, pins the parameters before the first output is written, and writes the marker last, atomically, with the
// counts, whatever the exit status of a run that started. Without a plan, runs `run`.
int run_shard_command(const PinnedCommand& command, const CommonOptions& common, const std::function<int()>& run);

}  // namespace rsz::app
