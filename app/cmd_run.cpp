#include <filesystem>
#include <iostream>
#include <variant>

#include "commands.h"

namespace rsz::app {

void setup_run(CLI::App& app, RunOptions& o) {
  CLI::App* cmd = app.add_subcommand("run", "Run a batch file: inputs (files, folders, globs) and the steps to apply");
  cmd->add_option("batch", o.batch_file, "Batch JSON file")->required();
  cmd->add_option("-o,--output", o.common.output, "Output folder (overrides the file's \"output_dir\")");
  cmd->add_option("-j,--jobs", o.common.jobs, "Inputs processed in parallel (default 0: all cores)")
      ->check(CLI::Range(0, 4096));
  cmd->add_flag("--json", o.common.json, "Print one JSON line per output on stdout");
  cmd->add_flag("-n,--dry-run", o.common.dry_run, "List what would be written and write nothing");
  cmd->add_flag("-q,--quiet", o.common.quiet, "No progress bar and no summary");
  cmd->add_option("--backend", o.common.backend, "Kernel backend: auto (default) or reference")
      ->check(CLI::IsMember({"auto", "reference"}));
  cmd->footer("Examples:\n  rsz run configs/batch.json\n  rsz run configs/batch.json --dry-run\n"
              "  rsz run configs/batch.json -o /tmp/build --jobs 2 --json");
}

int run_run(const RunOptions& o) {
  const io::BatchFile batch = io::read_batch_file(o.batch_file);
  CommonOptions common = o.common;
  if (batch.dtype) common.dtype = to_string(*batch.dtype);
  const std::string folder = common.output.empty() ? batch.output_dir : common.output;
  if (folder.empty()) usage_error(o.batch_file + ": no output folder; set \"output_dir\" or pass -o");
  const std::vector<std::string> inputs = batch.inputs.empty() ? std::vector<std::string>{}
                                                               : expand_inputs(batch.inputs, false);
  std::vector<Job> jobs;
  for (const io::BatchStep& step : batch.steps) {
    const std::string output = (std::filesystem::path(folder) / step.output_template).string();
    std::vector<Job> step_jobs;
    if (const auto* resample = std::get_if<io::ResampleConfig>(&step.config)) {
      step_jobs = make_resample_jobs(inputs, *resample, output, common);
    } else if (const auto* upsample = std::get_if<io::Upsample2dConfig>(&step.config)) {
      step_jobs = make_upsample_jobs(inputs, *upsample, output, common);
    } else {
      step_jobs = make_roi_align_jobs(inputs, std::get<io::RoiAlignConfig>(step.config), {step.rois_path, ""}, output,
                                      common, false);
    }
    jobs.insert(jobs.end(), step_jobs.begin(), step_jobs.end());
  }
  std::vector<std::string> all_inputs;
  for (const Job& job : jobs) all_inputs.push_back(job.input);
  check_jobs(all_inputs, jobs);
  const int status = run_jobs(jobs, common, "run");
  if (!common.quiet && !common.dry_run) std::cerr << "rsz: outputs are under " << folder << "\n";
  return status;
}

}  // namespace rsz::app
