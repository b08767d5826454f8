#include <algorithm>
#include <filesystem>
#include <iostream>
#include <limits>
#include <variant>

#include "commands.h"

namespace rsz::app {

void setup_run(CLI::App& app, RunOptions& o) {
  CLI::App* cmd = app.add_subcommand("run", "Run a batch file: inputs (files, folders, globs) and the steps to apply");
  cmd->add_option("batch", o.batch_file, "Batch JSON file")->required();
  cmd->add_option("-o,--output", o.common.output, "Output folder (overrides the file's \"output_dir\")");
  cmd->add_option("-j,--jobs", o.common.jobs, "Inputs processed in parallel (default 0: all cores)")
      ->check(whole_number(0, 4096));
  cmd->add_flag("--json", o.common.json, "Print one JSON line per output on stdout");
  cmd->add_flag("-n,--dry-run", o.common.dry_run, "List what would be written and write nothing");
  cmd->add_flag("-q,--quiet", o.common.quiet, "No progress bar and no summary");
  add_backend_options(*cmd, o.common);
  cmd->add_option("--max-memory", o.common.max_memory,
                  "Memory budget, e.g. 2G or 512M (default: min(4G, half the RAM))");
  cmd->add_option("--max-pixels", o.common.max_pixels,
                  "Refuse input and output images with more pixels than this (default 268435456)")
      ->check(whole_number(1, std::numeric_limits<std::int64_t>::max()));
  cmd->add_flag("--skip-existing", o.common.skip_existing,
                "Resume an interrupted run: inputs whose outputs all exist are skipped without being read");
  cmd->add_option("--max-samples", o.common.max_samples,
                  "roi_align steps: refuse ROIs that need more samples than this in total (0: no limit)")
      ->check(whole_number(0, std::numeric_limits<std::int64_t>::max()));
  cmd->footer("Examples:\n  rsz run configs/batch.json\n  rsz run configs/batch.json --dry-run\n"
              "  rsz run configs/batch.json -o /tmp/build --jobs 2 --json");
}

int run_run(const RunOptions& o) {
  check_json_budget(o.batch_file, "batch file", memory_budget(o.common.max_memory));
  const io::BatchFile batch = io::read_batch_file(o.batch_file);
  CommonOptions common = o.common;
  if (batch.dtype) common.dtype = to_string(*batch.dtype);
  const std::string folder = common.output.empty() ? batch.output_dir : common.output;
  if (folder.empty()) usage_error(o.batch_file + ": no output folder; set \"output_dir\" or pass -o");
  const std::vector<std::string> inputs = batch.inputs.empty() ? std::vector<std::string>{}
                                                               : expand_inputs(batch.inputs, false);
  // Steps run in phases: a step with "input": "previous" starts a new phase, whose inputs are the outputs the
  // previous step wrote. Each phase is planned (every header probed) before it writes anything.
  std::vector<std::string> other_inputs{o.batch_file};
  std::vector<std::string> phase_inputs = inputs;
  std::vector<std::string> previous_outputs;
  int status = kExitOk;
  std::size_t index = 0;
  while (index < batch.steps.size()) {
    std::vector<Job> jobs;
    std::vector<std::string> step_outputs;
    if (batch.steps[index].chained) phase_inputs = previous_outputs;
    do {
      const io::BatchStep& step = batch.steps[index];
      const std::string output = (std::filesystem::path(folder) / step.output_template).string();
      const OperatorCommand* entry = find_operator(step.op);
      if (entry == nullptr) usage_error(o.batch_file + ": step " + std::to_string(index) + ": no operator " + step.op);
      std::vector<Job> step_jobs = entry->batch_jobs(phase_inputs, step, output, common, other_inputs);
      step_outputs.clear();
      for (Job& job : step_jobs) {
        job.size_flags = "the config of step " + std::to_string(index) + " (/steps/" + std::to_string(index) +
                         "/config)";
        step_outputs.insert(step_outputs.end(), job.planned_outputs.begin(), job.planned_outputs.end());
      }
      jobs.insert(jobs.end(), step_jobs.begin(), step_jobs.end());
      ++index;
    } while (index < batch.steps.size() && !batch.steps[index].chained);
    std::vector<std::string> all_inputs;
    for (const Job& job : jobs) all_inputs.push_back(job.input);
    check_jobs(all_inputs, jobs, other_inputs);
    if (common.dry_run && phase_inputs != inputs) {
      // A chained phase's inputs do not exist yet: list what it would write without probing them.
      for (const Job& job : jobs) {
        for (const auto& out : job.planned_outputs) std::cout << printable(job.input) << " -> " << printable(out) << "\n";
      }
    } else {
      status = std::max(status, run_jobs(jobs, common));
      common.verbose = false;  // the backend note once per run, not once per phase
    }
    // The next chained step runs on what the last step of this phase wrote (outputs of failed inputs are absent).
    previous_outputs.clear();
    for (const std::string& out : step_outputs) {
      std::error_code ec;
      if (common.dry_run || std::filesystem::is_regular_file(out, ec)) previous_outputs.push_back(out);
    }
    if (index < batch.steps.size() && previous_outputs.empty()) {
      to_stderr("rsz: " + printable(o.batch_file) + ": step " + std::to_string(index) +
                " takes the previous step's outputs, and that step wrote none; stopped\n");
      return kExitFailed;
    }
    other_inputs.insert(other_inputs.end(), all_inputs.begin(), all_inputs.end());  // never overwritten later
  }
  if (!common.quiet && !common.dry_run) to_stderr("rsz: outputs are under " + printable(folder) + "\n");
  return status;
}

}  // namespace rsz::app
