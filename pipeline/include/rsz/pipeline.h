// rsz::pipeline, the library under the rsz command line: a job over files (one operator over inputs named by files,
// folders or patterns, outputs named by a file, folder or template), planned whole before anything is written and
// run on the CPUs within a memory budget, with the command line's naming, checks, formats, metadata handling and
// resume, and a Report of what it did. Each call is a run of its own: calls from several threads run at once and
// share nothing but the thread pool (and, without a max_memory setting, the process's default memory budget).
//
//   rsz::pipeline::Request request;
//   request.op = "thumbnail";
//   rsz::io::ResizeIntent intent;
//   intent.box = rsz::io::parse_size("256", "size", true);
//   rsz::io::apply_thumbnail_defaults(intent, false);
//   request.config = intent;
//   request.inputs = {"photos/"};
//   request.output = "thumbs/{relpath}.jpg";
//   request.settings = {{"recursive", "true"}, {"quality", "85"}};
//   const rsz::pipeline::Report report = rsz::pipeline::run(request);   // report.status, report.records, ...
//
// docs/LIBRARY.md says more; the CMake package's target is rsz::pipeline (pkg-config: rsz-pipeline).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "rsz/io/batch_file.h"
#include "rsz/io/config.h"
#include "rsz/io/resize.h"
#include "rsz/pipeline/report.h"

#pragma GCC visibility push(default)

namespace rsz::pipeline {

struct Request {
  // What runs, in one of two forms:
  //  * a command and its options by key, as their flags' text (rsz/pipeline/commands.h: the command line's own
  //    vocabulary): command "thumbnail", options {{"size", "256"}, {"fit", "cover"}}; "roi-align" takes its ROI file as
  //    the option "rois", and "run" runs a batch file, options {{"batch", "b.json"}}. Only this form runs a plan's
  //    shard (the settings "plan" and "shard"), since --plan pins the options as given;
  //  * or the operator: "resample", "thumbnail", "upsample2d" or "roi_align", and its config (a ResizeIntent for the
  //    first two, with io::apply_thumbnail_defaults for a thumbnail). request_of() makes both from a batch file's step.
  std::string command;
  std::map<std::string, std::string> options;
  std::string op;
  std::variant<io::ResizeIntent, io::Upsample2dConfig, io::RoiAlignConfig> config;
  // Files, folders (their images and .npy files; with the "recursive" setting, below them too) and patterns
  // ("photos/**/*.jpg"); none for roi_align annotations that name their own images.
  std::vector<std::string> inputs;
  // A file (one input), a folder (ending in '/'), a name template ({stem} {ext} {dir} {relpath} {parent} {op}, and
  // for crops {index} {label} {id}) or webdataset parts ("out/{part}.tar").
  std::string output;
  // Run-level settings by key (io::run_settings(): the keys of rsz.run_settings() and of batch files), as their
  // flags' text: {"quality", "90"}, {"shrink_on_load", "true"}, {"max_memory", "2G"}, {"dry_run", "true"}.
  std::map<std::string, std::string> settings;
  // Inputs given by name are named as if found in this folder: their {dir}, {relpath} and shard key are their path
  // below it ("" for their names alone).
  std::string inputs_below;
  // roi_align by its operator: the boxes (JSON, COCO, Pascal VOC, YOLO or a dataset file), the image root of COCO /
  // VOC annotations, YOLO's class names, the crop manifest (.jsonl or .csv) written after the run, and what boxes
  // outside the image and images of another size than their annotations state do.
  std::string rois;
  std::string image_root;
  std::string names;
  std::string manifest;
  io::RoisCheck rois_check = io::RoisCheck::Warn;
  io::SizeMismatch size_mismatch = io::SizeMismatch::Fail;
  bool skip_crowd = false;
  bool skip_difficult = false;
  // Whether the report keeps a record of every output (false: the counts and the first failures only, for a run
  // over millions of files), and whether rsz's lines (failures, the summary) also go to stderr (they are always in
  // the report's messages).
  bool keep_records = true;
  bool echo_stderr = false;
};

// The operator, config and ROI source of a batch file's step (io::parse_batch_file); inputs, output and settings
// are left to the caller.
Request request_of(const io::BatchStep& step);

// A request planned (plan()): every input listed and its header read, every output named and checked, each job's
// resize call made, the memory each job holds counted; nothing written. `report` is the plan as data: a Planned
// record per output (its shape, data type and resize call as JSON members: what --dry-run --json prints), a Failed
// record per input that cannot run (missing, corrupt, over a limit), the warnings, and status 0 (every input
// planned), 1 (some input failed) or 2 (the request refused: error_code and error say why; nothing can run).
// run(plan) runs it as planned, once: inputs are not listed again, headers not read again, nothing planned twice.
// Copies of a Plan share the one planned run.
class Plan {
 public:
  Report report;
  // Whether run(plan) would run jobs: planned, not refused, not run yet, not a dry run.
  bool runnable() const;
  struct State;  // the planned run (the library's own)

 private:
  friend Plan plan(const Request& request);
  friend Report run(const Plan& plan);
  std::shared_ptr<State> state_;
};

// Plans the request (above). A request by command that runs a plan's shard (the "plan" setting) or a batch file
// (command "run") is planned when it runs, since a shard is claimed and its list read then, and a batch's steps
// read what the steps before them wrote: plan() gives its dry run's report, and run(plan) plans it again.
Plan plan(const Request& request);
// Runs a plan: a Report with one record per output written (or kept, with --skip-existing) and per input that failed,
// the counts and the status (0 done; 1 some input failed; 2 refused: a refused plan, one that ran already, an empty
// Plan). An input whose file changed since it was planned fails alone ("the file changed while rsz ran") or is
// planned again where its plan no longer fits. With the dry_run setting it writes nothing and returns the plan's
// report.
Report run(const Plan& plan);
// run(plan(request)): a request that cannot be met (an unknown option or setting, or one the operator does not take,
// an output rsz cannot write, outputs that collide, a limit too low for the request) writes nothing: status 2, with
// error_code and error set. An input that fails (missing, corrupt, over a limit) is a Failed record; the others
// still run (status 1).
Report run(const Request& request);

// The GPU stage of the decode "gpu" setting (its worker, nvJPEG's decoders on the GPU's JPEG engines, two batches'
// GPU memory and pinned host memory) is kept when a run of this library ends, for the process's next runs on the
// same device: making it takes most of a second. A stage whose batches the GPU failed is not kept. release_gpu_stages()
// lets the kept ones go and returns how many; a run under way (or a Plan not run yet) that holds one keeps it until it
// ends, and does not keep it then. 0 in builds without nvJPEG.
std::size_t release_gpu_stages();

// rsz plan: the inputs (files, folders, patterns) listed once and split into `shards` shard lists in the folder
// `state` (new or empty). Each shard then runs from a Request by command with the settings {"plan", state} and
// {"shard", "I"} (or `rsz COMMAND --plan STATE --shard I`), on any machine that sees the same paths; its outputs'
// parameters are pinned by the first shard that writes.
struct PlanRequest {
  std::vector<std::string> inputs;
  std::string state;
  std::int64_t shards = 0;  // 1 to 1000000
  bool recursive = false;
  bool hidden = false;
};
// Status 0 with STATE/plan.json written; status 2 with error_code and error (and nothing left in STATE) for a request
// that cannot be met: no inputs, a missing input, a state folder that is not empty.
Report make_plan(const PlanRequest& request);

// rsz merge: every shard of the plan in `state` (make_plan's) checked from its marker, the manifests of roi-align
// shards joined, and with `clean` the temporary files that killed runs left removed.
struct MergeRequest {
  std::string state;
  bool clean = false;
};
struct MergeResult {
  // status 0: every shard done; 1: some shard to run again (missing or failed; `json`'s "rerun" names them in
  // Slurm's --array syntax), or the manifests could not be joined (messages say why); 2: refused (no plan there),
  // with error_code and error.
  Report report;
  // The object `rsz merge STATE --json` prints ("" when refused): shards, done, missing, failed, rerun, the totals,
  // the joined manifests.
  std::string json;
};
MergeResult merge(const MergeRequest& request);

}  // namespace rsz::pipeline

#pragma GCC visibility pop
