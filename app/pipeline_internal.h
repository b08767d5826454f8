// What the command line's pipeline files (options.cpp, inputs.cpp, outputs.cpp, runner.cpp) share among
// themselves; the commands use common.h only.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common.h"

namespace rsz::app::detail {

// The path made absolute and canonical where it exists (lexically normal where it does not): the key under which
// inputs and outputs are compared.
std::string canonical_or_absolute(const std::string& path);
// Each expanded input's folder relative to the folder it was found in ({dir}; "" for files given by name or glob).
std::map<std::string, std::string>& input_dirs();
// Each expanded input's shard key (shards.h): its path below the -i folder or the fixed folders of its pattern,
// without extension; absent for files given by name (their stem is their key).
std::map<std::string, std::string>& input_keys();
// A file's shard key below `root`: its relative path without the extension ("2024/a" for root/2024/a.jpg); its name
// without the extension where it is not below `root`.
std::string key_below(const std::filesystem::path& file, const std::filesystem::path& root);
// What run_jobs did, added up over a command's runs (rsz run's phases): a shard's marker records it.
struct RunTotals {
  std::size_t jobs = 0;
  std::size_t written = 0;
  std::size_t failed = 0;
  std::size_t skipped = 0;  // inputs whose outputs all existed (--skip-existing)
  std::size_t kept = 0;     // the output files of those inputs
  // roi-align's manifests: the name given and the one written (with --plan, the shard's own).
  std::vector<std::pair<std::string, std::string>> manifests;
  // The first inputs that failed, with their messages (at most kMaxFailuresKept): a shard's marker names them, so
  // that rsz merge says which input keeps a shard failing.
  static constexpr std::size_t kMaxFailuresKept = 20;
  std::vector<std::pair<std::string, std::string>> failures;
};
RunTotals& run_totals();
// Called by run_jobs once planning is done, before anything is written (and not for --dry-run): with --plan, pins
// the parameters in STATE/params.json (a usage error, nothing written, when another shard pinned others).
std::function<void()>& before_writing();
// The state one run of the command line leaves in these tables (and in the plan's and the tar output's), cleared
// before an in-process run (cli.h's in_process_run): a host such as Python runs many commands in one process.
void reset_run_state();
// `input`, given by name, found as if in folder `root`: its {dir} and shard key are its path below `root`.
void set_input_below(const std::string& input, const std::string& root);
// While `sink` is set, to_stderr also appends what it writes to *sink (and writes nothing to stderr when `quiet`);
// nullptr stops it. For in_process_run.
void stderr_capture(std::string* sink, bool quiet);
// While `sink` is set, to_stdout appends to *sink instead of writing to standard output; nullptr stops it.
void stdout_capture(std::string* sink);
// The error of the first write to standard output that failed since the last call (errno's value), 0 for none;
// clears it.
int take_stdout_error();
// Whether --json records keep file names' bytes that are not UTF-8 (as \udcXX escapes, for Python's json.loads)
// instead of replacing them: set for in-process runs.
bool& json_keeps_bytes();
// Bits per sample of an image output: --depth, else the input image's, else 8.
int output_depth(const CommonOptions& options, bool from_image, int input_depth);
// The same for an output at `path`: 16 bits into a format without them become 8, unless --strict or --depth said.
int output_depth(const CommonOptions& options, bool from_image, int input_depth, const std::string& path);
// Channels of an image output of a result of `channels`: with --grayscale 1, or 2 where there is alpha.
int output_channels(const CommonOptions& options, std::int64_t channels);
// The same for an output at `path`: alpha into an image format without it is flattened (one channel fewer), unless
// --strict.
int output_channels(const CommonOptions& options, std::int64_t channels, const std::string& path);

}  // namespace rsz::app::detail
