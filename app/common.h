// Shared plumbing of the subcommands: common flags, input expansion, loading and saving tensors, output naming,
// and the parallel job runner with progress, --json records and the failure summary. No math lives here.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "rsz/exec.h"
#include "rsz/io/image.h"
#include "rsz/tensor.h"

namespace rsz::app {

// Exit statuses (CLI contract): 0 all written, 1 some input failed, 2 usage or config error (nothing was run).
constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;

struct CommonOptions {
  std::vector<std::string> inputs;
  std::string output;
  std::string config;
  std::string dtype = "float32";
  int jobs = 0;
  bool json = false;
  bool dry_run = false;
  bool quiet = false;
  bool recursive = false;
  bool no_exif = false;
  std::string alpha = "premultiplied";
  std::string backend = "auto";
  std::int64_t max_pixels = io::kDefaultMaxPixels;
  int quality = 0;           // 0: the format's default
  int png_compression = -1;  // -1: the fast default
};

// Adds -i/-o/--config/--dtype/--jobs/--json/--dry-run/--quiet/... to a subcommand.
void add_common_options(CLI::App& command, CommonOptions& options, bool with_config = true);

// Throws rsz::Error with ErrorCode::Usage (exit status 2).
[[noreturn]] void usage_error(const std::string& message);

// Files, folders (their images and .npy files, sorted; recursively with --recursive) and quoted globs, expanded in
// order, duplicates dropped. A path that does not exist, or a pattern or folder that matches nothing, is a usage
// error.
std::vector<std::string> expand_inputs(const std::vector<std::string>& patterns, bool recursive);

bool is_npy_path(const std::string& path);

// A tensor read from an image or .npy file, with what is needed to write results back in kind.
struct LoadedInput {
  Tensor tensor{DataType::Float32, {0}};  // the input as a float tensor; unused when `in_place`
  io::Image image;                        // the decoded pixels, the operator's input themselves when `in_place`
  bool in_place = false;
  bool from_image = false;
  int bit_depth = 8;
  DataType result_type = DataType::Float32;  // the data type of the operator's output

  // The operator input: `tensor`, or when `in_place` a unorm8/unorm16 1 x C x H x W view of the interleaved pixels.
  ConstTensorView view() const;
  Dims sizes() const { return view().sizes(); }
};

DataType compute_type(const CommonOptions& options);
io::AlphaMode alpha_mode(const CommonOptions& options);
// `threads`: kernel threads for this call (run_jobs hands out the cores left over when there are fewer inputs than
// --jobs); results do not depend on it.
ExecOptions exec_options(const CommonOptions& options, int threads);
// `in_place_ok`: the operator reads unorm inputs (resample), so an image whose values need no conversion other than
// p / (2^b - 1) (float32 compute type; no premultiplied alpha) is kept as decoded, with no float copy.
LoadedInput load_input(const std::string& path, const CommonOptions& options, bool in_place_ok = false);
// Writes a tensor as .npy or as an image (the format follows the extension), creating parent folders.
void save_output(const std::string& path, const ConstTensorView& tensor, const LoadedInput& source,
                 const CommonOptions& options);

// Output naming. A template (contains '{') expands {stem} {ext} {op} {index} {label} {id}; otherwise `output` is a
// folder when it exists as one, ends with '/', or there are several inputs (names then follow `default_name`), and a
// file path for a single input.
struct NameFields {
  std::string input;
  std::string op;
  std::string ext;  // the output extension with its dot
  std::string index;
  std::string label;
  std::string id;
};
std::string expand_template(const std::string& pattern, const NameFields& fields);
bool output_is_template(const std::string& output);
bool output_is_folder(const std::string& output, std::size_t input_count);
// The output path of one result: `output` expanded when it is a template; `folder_template` expanded inside it
// when it is a folder; `output` itself otherwise.
std::string plan_output(const std::string& output, std::size_t input_count, const NameFields& fields,
                        const std::string& folder_template);
// The extension results of `input` get by default: its own for images, .npy for tensors.
std::string default_extension(const std::string& input);
// Refuses an output that is one of the inputs, or the same output planned twice.
void check_outputs(const std::vector<std::string>& inputs, const std::vector<std::string>& outputs);

// What one processed input produced, for --json and --dry-run.
struct OutputRecord {
  std::string path;
  Dims shape;
  std::string dtype;
};

// One unit of work: an input and the function that processes it with the given kernel thread count (returns what
// it wrote).
struct Job {
  std::string input;
  std::vector<std::string> planned_outputs;
  std::function<std::vector<OutputRecord>(int threads)> run;
};

// check_outputs over every planned output of the jobs.
void check_jobs(const std::vector<std::string>& inputs, const std::vector<Job>& jobs);

// Runs the jobs on --jobs threads (at most that many inputs in memory at once), shows a progress bar on a terminal,
// prints a JSON line per output with --json, reports each failure on one line, and returns the exit status.
// With --dry-run it lists the planned outputs and runs nothing.
int run_jobs(const std::vector<Job>& jobs, const CommonOptions& options, const std::string& op);

// Parsing helpers for flag values; each throws a usage error naming the flag.
std::vector<float> parse_float_list(const std::string& flag, const std::string& text, std::size_t min_count,
                                    std::size_t max_count);
std::vector<std::int64_t> parse_int_list(const std::string& flag, const std::string& text, char separator,
                                         std::size_t count);

}  // namespace rsz::app
