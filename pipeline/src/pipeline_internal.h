// What the command line's pipeline files (options.cpp, inputs.cpp, outputs.cpp, runner.cpp) share among
// themselves; the commands use common.h only.
#pragma once

#include <atomic>
#include <exception>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <future>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "pipeline.h"
#include "rsz/pipeline/report.h"
#include "rsz/io/temporary_files.h"

namespace rsz::app::detail {

// The path made absolute and canonical where it exists (lexically normal where it does not, then canonical again
// where that names existing folders: "new/../linked/x"): the key under which inputs and outputs are compared.
std::string canonical_or_absolute(const std::string& path);
// canonical_or_absolute for many paths, each folder resolved once: a file that exists (not a link) or does not exist
// yet, named without "..", is its folder's form and its name, one lstat instead of a walk of the whole path (the outputs of a COCO file of
// train2017's size, 860,001 crops, spent 13 of 37 s resolving each path whole). Links and the rest are resolved whole.
class CanonicalPaths {
 public:
  // canonical_or_absolute(path); *folder (where given): whether it names an existing folder (through a link too).
  std::string of(const std::string& path, bool* folder = nullptr);

 private:
  std::unordered_map<std::string, std::string> folders_;  // a path's folder as given -> its canonical form
};
// Each expanded input's folder relative to the folder it was found in ({dir}; "" for files given by name or glob):
// current_run().input_dirs.
std::map<std::string, std::string>& input_dirs();
// Each expanded input's shard key (shards.h): its path below the -i folder or the fixed folders of its pattern,
// without extension; absent for files given by name (their stem is their key): current_run().input_keys.
std::map<std::string, std::string>& input_keys();
// A file's shard key below `root`: its relative path without the extension ("2024/a" for root/2024/a.jpg); its name
// without the extension where it is not below `root`.
std::string key_below(const std::filesystem::path& file, const std::filesystem::path& root);
// What run_jobs did, added up over a command's runs (rsz run's phases): the run's report (a shard's marker records
// its counts and first failures; an in-process run returns it whole).
using RunTotals = rsz::pipeline::Report;

struct TarState;   // tar_output.cpp: a .tar output's parts being written
struct PlanState;  // shards.cpp: what was read of a --plan
// What one run of the command line holds, from its inputs' keys to its totals: each call of cli_main and of
// in_process_run makes one and installs it (RunScope) on its thread, and the runner installs it on the pool's threads
// for the tasks of the run, so two runs in two threads of one process share nothing (the pool itself aside).
struct RunState {
  // The run's inputs and the files it reads besides them (check_jobs): no output is renamed over one of them, however
  // it is named (io::ProtectedFiles, behind check_outputs' names), until the run ends.
  io::ProtectedFiles protected_inputs;
  std::map<std::string, std::string> input_dirs;
  std::map<std::string, std::string> input_keys;
  RunTotals totals;
  std::mutex totals_mutex;  // its records, which the pool's threads add
  bool not_read_said = false;  // the summary named the files of the input folders that no codec reads
  std::set<std::string> not_read_seen;  // their canonical names: a folder given twice (or within another) counts once
  // Called by run_jobs once planning is done, before anything is written (and not for --dry-run): with --plan, pins
  // the parameters in STATE/params.json (a usage error, nothing written, when another shard pinned others).
  std::function<void()> before_writing;
  // Whether --json records keep file names' bytes that are not UTF-8 (as \udcXX escapes, for Python's json.loads)
  // instead of replacing them: set for in-process runs.
  bool json_keeps_bytes = false;
  // A run of in_process_run: runs of several threads may be under way at once, and those without --max-memory share
  // the process's default budget (the runner's).
  bool in_process = false;
  // -i - read past the memory budget: the message its input fails with ("" when none).
  std::string stdin_problem;
  // The run's temporary-file tag (--plan), --no-sync and JSON budget, for every thread that works for it.
  io::ThreadSettings io;
  // In-process runs: while `stderr_sink` is set, to_stderr also appends what it writes there (and writes nothing to
  // stderr when `quiet_stderr`); while `stdout_sink` is set, to_stdout appends there instead of writing.
  std::mutex stderr_mutex;
  std::string* stderr_sink = nullptr;
  bool quiet_stderr = false;
  // Past this many bytes in `stderr_sink`, only the last text written is kept (`stderr_last`), the others counted.
  std::size_t stderr_sink_limit = static_cast<std::size_t>(-1);
  std::string stderr_last;
  std::size_t stderr_dropped = 0;
  bool discard_stdout = false;  // what goes to standard output is dropped (a library run: the report says it)
  std::mutex stdout_mutex;  // its own: a stalled reader of standard output never holds up stderr's messages
  std::string* stdout_sink = nullptr;
  int stdout_error = 0;  // errno of the first failed write to standard output
  // The modules' own state, made on first use (tar_state(), plan_state()).
  std::mutex slots_mutex;
  std::shared_ptr<TarState> tar;
  std::shared_ptr<PlanState> plan;
  // --decode gpu: the run's GPU resampler (resample_jobs.cpp), or why it could not be made: made by the first job
  // that needs it (or taken from the process's keeper) and kept for the run's later jobs (rsz run's steps); when the
  // run ends (end_gpu_stage), let go (its workers and GPU memory go with it) or, in-process, kept for the next runs.
  std::mutex gpu_mutex;
  std::shared_ptr<void> gpu;
  std::exception_ptr gpu_error;
  // The GPU resampler being made in the background while the run plans (its CUDA context and nvJPEG's hardware
  // decoder take most of a second): the first job that needs it takes it from here. Declared after `gpu`, so that it
  // ends first: letting it go waits for the making to finish.
  std::future<std::shared_ptr<void>> gpu_making;
  // In-process runs: the keeper's key of the stage (whether it decodes files, and its devices, sorted), and the
  // keeper's generation when the run made it (a stage made before release_gpu_stages() is not kept for the next runs).
  std::pair<bool, std::vector<int>> gpu_stage_key;
  std::uint64_t gpu_generation = 0;
  int gpu_pid = 0;  // the process that made or took it
  // RSZ_GPU_STATS: the GPU jobs' side, in microseconds summed over their threads: reading their files (header and
  // bytes), waiting for the stage, and encoding and writing their outputs; said when the run ends (end_gpu_stage).
  std::atomic<std::uint64_t> gpu_jobs{0};
  std::atomic<std::uint64_t> gpu_read_us{0};
  std::atomic<std::uint64_t> gpu_wait_us{0};
  std::atomic<std::uint64_t> gpu_save_us{0};
};
// The calling thread's run: the innermost RunScope's; a process-wide one where none is installed (a library caller).
RunState& current_run();
// Installs `run` (and its io settings) on this thread until the scope ends.
class RunScope {
 public:
  explicit RunScope(RunState& run);
  ~RunScope();
  RunScope(const RunScope&) = delete;
  RunScope& operator=(const RunScope&) = delete;

 private:
  RunState* previous_;
  io::ThreadSettingsScope io_;
};
RunTotals& run_totals();  // current_run().totals

// `input`, given by name, found as if in folder `root`: its {dir} and shard key are its path below `root`.
void set_input_below(const std::string& input, const std::string& root);
// The error of the first write to standard output that failed since the last call (errno's value), 0 for none;
// clears it.
int take_stdout_error();
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
