// rsz run's batch files: each step's jobs, planned phase by phase ("input": "previous" chains a step to what the
// step before it writes) before anything is written, then run.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <limits>
#include <map>
#include <set>
#include <variant>

#include "batch.h"
#include "jobs.h"
#include "rsz/io/batch_file.h"

namespace rsz::app {

namespace {

// The jobs of one step over `inputs`; files the step reads besides the inputs (ROI files, class names) are added to
// `other_inputs`, which no output may replace.
std::vector<Job> step_jobs_of(const io::BatchStep& step, const std::vector<std::string>& inputs,
                              const std::string& output, const CommonOptions& common,
                              std::vector<std::string>& other_inputs) {
  if (step.op == "resample" || step.op == "thumbnail") {
    return make_resample_jobs(inputs, std::get<io::ResizeIntent>(step.config), output, common,
                              step.op == "resample" ? "resample" : "thumbnail");
  }
  // --linear is resample's and thumbnail's: the other steps compute on the values as they are.
  CommonOptions encoded = common;
  encoded.linear = false;
  if (step.op == "upsample2d") {
    return make_upsample_jobs(inputs, std::get<io::Upsample2dConfig>(step.config), output, encoded);
  }
  if (step.op != "roi_align") throw InternalError("batch step of an unknown operator " + step.op);
  check_json_budget(step.rois_path, "\"rois\" of a roi_align step", common.memory_budget());
  other_inputs.push_back(step.rois_path);
  RoiSource source;
  source.rois_path = step.rois_path;
  source.image_root = step.image_root;
  source.names_path = step.names_path;
  source.skip_crowd = step.skip_crowd;
  source.skip_difficult = step.skip_difficult;
  if (!step.names_path.empty()) {
    check_json_budget(step.names_path, "\"names\" of a roi_align step", common.memory_budget());
    other_inputs.push_back(step.names_path);
  }
  CommonOptions step_options = encoded;
  if (step.rois_check) step_options.rois_check = *step.rois_check;
  if (step.size_mismatch) step_options.size_mismatch = *step.size_mismatch;
  return make_roi_align_jobs(inputs, std::get<io::RoiAlignConfig>(step.config), source, output, step_options,
                             false);
}

// Steps run in phases: a step with "input": "previous" starts a new phase, whose inputs are the outputs the previous
// step writes. The whole batch is planned before anything is written: a chained phase is planned from what the step
// before it will write (predict_outputs), so a request that cannot be met in any phase stops the run with nothing
// written, and --dry-run lists every phase as it would run.
struct Phase {
  std::vector<Job> jobs;
  std::vector<std::string> last_step_outputs;  // what the next chained step takes
  bool chained = false;
  std::string manifest;  // a roi_align step's "manifest", under the output folder (one per phase)
};

class BatchRun {
 public:
  BatchRun(const std::string& batch_file, const CommonOptions& options);
  int run();

 private:
  Phase plan_phase();
  void add_step(Phase& phase);
  void check_phase(const Phase& phase);
  void select_phase_shard(Phase& phase);
  bool plan_next_inputs(const Phase& phase);
  int run_phase(Phase& phase);

  const std::string& batch_file_;
  const io::BatchFile batch_;
  CommonOptions common_;
  std::string folder_;
  std::vector<std::string> other_inputs_;
  std::vector<std::string> planned_inputs_;  // with --plan: every shard's inputs (inputs_where_outputs_go's candidates)
  std::vector<std::string> phase_inputs_;
  std::map<std::string, InputProbe> predicted_;  // the previous phase's outputs, as reading them back would give
  std::vector<Phase> phases_;
  std::size_t index_ = 0;  // the next step to plan
};

BatchRun::BatchRun(const std::string& batch_file, const CommonOptions& options)
    : batch_file_(batch_file),
      batch_((check_json_budget(batch_file, "batch file", options.memory_budget()), io::read_batch_file(batch_file))),
      common_(options),
      other_inputs_{batch_file} {
  apply_batch_settings(common_, batch_, batch_file);
  folder_ = common_.output.empty() ? batch_.output_dir : common_.output;
  if (folder_.empty()) usage_error(batch_file + ": no output folder; set \"output_dir\" or pass -o");
  // With --plan, the shard's list stands for the batch file's "inputs".
  phase_inputs_ = !common_.plan.empty()   ? plan_shard_inputs(common_)
                  : batch_.inputs.empty() ? std::vector<std::string>{}
                                          : expand_inputs(batch_.inputs, common_.recursive, common_.hidden);
  planned_inputs_ = plan_all_inputs(common_);  // the other shards' inputs: never written over
}

// Step index_'s jobs added to the phase.
void BatchRun::add_step(Phase& phase) {
  const std::size_t index = index_;
  const io::BatchStep& step = batch_.steps[index];
  const std::string output = (std::filesystem::path(folder_) / step.output_template).string();
  std::vector<Job> step_jobs = step_jobs_of(step, phase_inputs_, output, common_, other_inputs_);
  if (!step.manifest.empty()) {
    if (!phase.manifest.empty()) {
      usage_error(batch_file_ + ": steps run together (no \"input\": \"previous\" between them) write one "
                  "manifest; step " + std::to_string(index) + " names a second");
    }
    phase.manifest = (std::filesystem::path(folder_) / step.manifest).string();
  }
  phase.last_step_outputs.clear();
  for (Job& job : step_jobs) {
    if (phase.chained && !predicted_.count(job.input)) {
      usage_error(batch_file_ + ": step " + std::to_string(index) + " (/steps/" + std::to_string(index) +
                  ") takes \"input\": \"previous\", but its ROI file names its own images (" + printable(job.input) +
                  "); drop \"input\": \"previous\" or give plain-form ROIs");
    }
    if (phase.chained) job.probe = predicted_.at(job.input);
    job.size_flags = "the config of step " + std::to_string(index) + " (/steps/" + std::to_string(index) + "/config)";
    phase.last_step_outputs.insert(phase.last_step_outputs.end(), job.planned_outputs.begin(),
                                   job.planned_outputs.end());
  }
  phase.jobs.insert(phase.jobs.end(), step_jobs.begin(), step_jobs.end());
  ++index_;
}

// The whole phase's names checked: no output replaces an input of this or an earlier phase, none is planned twice.
void BatchRun::check_phase(const Phase& phase) {
  std::vector<std::string> all_inputs;
  for (const Job& job : phase.jobs) all_inputs.push_back(job.input);
  // The listed inputs too (roi-align's images without boxes make no job); a chained phase's are what the phase
  // before will write.
  if (!phase.chained) all_inputs.insert(all_inputs.end(), phase_inputs_.begin(), phase_inputs_.end());
  std::vector<std::string> manifests;
  if (!phase.manifest.empty()) manifests = {shard_manifest(common_, phase.manifest), phase.manifest};
  const std::vector<std::string> planned = inputs_where_outputs_go(planned_inputs_, phase.jobs, manifests);
  all_inputs.insert(all_inputs.end(), planned.begin(), planned.end());
  check_jobs(all_inputs, phase.jobs, other_inputs_);
  // A chained phase's inputs are what the phase before will write (files of an earlier run may stand there now).
  if (!common_.dry_run && !phase.chained) {
    protect_inputs(all_inputs);
    protect_inputs(other_inputs_);
  }
  if (!phase.manifest.empty()) {
    std::vector<std::string> outputs{shard_manifest(common_, phase.manifest)};  // the file this run writes
    check_output_folder(outputs.front(), "\"manifest\"");  // it is written last: not after the crops
    if (!common_.plan.empty()) outputs.push_back(phase.manifest);  // the one rsz merge writes from the shards
    for (const Job& job : phase.jobs) outputs.insert(outputs.end(), job.planned_outputs.begin(), job.planned_outputs.end());
    check_outputs(all_inputs, outputs, other_inputs_);  // the manifest is an output like the crops
  }
  other_inputs_.insert(other_inputs_.end(), all_inputs.begin(), all_inputs.end());  // never overwritten later
}

// The shard's inputs, once the whole job's names were checked; chained phases follow from what they write.
// select_shard says the shard's counts in common_.summary_prefix.
void BatchRun::select_phase_shard(Phase& phase) {
  if (phase.chained || common_.shard_index < 0) return;
  phase.jobs = select_shard(std::move(phase.jobs), common_);
  std::set<std::string> kept;
  for (const Job& job : phase.jobs) kept.insert(job.planned_outputs.begin(), job.planned_outputs.end());
  std::vector<std::string> outputs;
  for (const std::string& out : phase.last_step_outputs) {
    if (kept.count(out)) outputs.push_back(out);
  }
  phase.last_step_outputs = std::move(outputs);
}

Phase BatchRun::plan_phase() {
  Phase phase;
  phase.chained = batch_.steps[index_].chained;
  do {
    add_step(phase);
  } while (index_ < batch_.steps.size() && !batch_.steps[index_].chained);
  check_phase(phase);
  select_phase_shard(phase);
  return phase;
}

// The next phase's inputs: what this one will write (predicted); false when there is no next phase.
bool BatchRun::plan_next_inputs(const Phase& phase) {
  const bool several_phases = index_ < batch_.steps.size() || !phases_.empty();
  if (several_phases) predicted_ = predict_outputs(phase.jobs, common_);  // a usage error stops all, here
  if (index_ >= batch_.steps.size()) return false;
  phase_inputs_.clear();
  for (const std::string& out : phase.last_step_outputs) {
    if (predicted_.count(out)) phase_inputs_.push_back(out);
  }
  if (phase_inputs_.empty()) {
    usage_error(batch_file_ + ": step " + std::to_string(index_) + " takes the previous step's outputs, and that "
                "step would write none");
  }
  return true;
}

// Run time: a chained phase reads the files its previous phase really wrote (an input that failed there has no
// output here, and was reported then). Their headers are read again rather than the predicted probes kept: the file
// is the truth where the prediction is not (a gray result written as WebP reads back as RGB; a file left by an
// earlier run stands where this run's job failed), and the memory budget and output checks must count what job.run
// will load. -1 when a chained phase has nothing to run.
int BatchRun::run_phase(Phase& phase) {
  if (!common_.dry_run) {
    std::vector<Job> runnable;
    for (Job& job : phase.jobs) {
      std::error_code ec;
      if (phase.chained && !std::filesystem::is_regular_file(job.input, ec)) continue;
      job.probe.reset();
      runnable.push_back(std::move(job));
    }
    if (phase.chained && runnable.empty()) {
      to_stderr("rsz: " + printable(batch_file_) + ": a chained step's inputs were not written (the step before it "
                "failed on every input); stopped\n");
      return -1;
    }
    phase.jobs = std::move(runnable);
  }
  CommonOptions phase_options = common_;
  phase_options.manifest = phase.manifest;
  const int status = run_jobs(phase.jobs, phase_options);
  common_.verbose = false;  // the backend note once per run, not once per phase
  return status;
}

int BatchRun::run() {
  while (index_ < batch_.steps.size()) {
    Phase phase = plan_phase();
    if (phase.jobs.empty() && common_.shard_index >= 0) {  // a shard without inputs: nothing to chain
      phases_.push_back(std::move(phase));
      break;
    }
    const bool more = plan_next_inputs(phase);
    phases_.push_back(std::move(phase));
    if (!more) break;
  }
  int status = kExitOk;
  for (Phase& phase : phases_) {
    const int phase_status = run_phase(phase);
    if (phase_status < 0) return kExitFailed;
    status = std::max(status, phase_status);
  }
  if (!common_.quiet && !common_.dry_run) to_stderr("rsz: outputs are under " + printable(folder_) + "\n");
  return status;
}

}  // namespace

int run_batch(const std::string& batch_file, const CommonOptions& options) { return BatchRun(batch_file, options).run(); }

}  // namespace rsz::app
