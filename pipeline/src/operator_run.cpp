// One operator over a run's inputs (jobs.h's run_operator): what the command line's operator subcommands and the
// library's rsz::pipeline::run share, from the input list to the exit status.
#include <algorithm>
#include <memory>
#include <variant>

#include "jobs.h"
#include "streams.h"

namespace rsz::app {

std::unique_ptr<PlannedJobs> plan_operator(const OperatorRequest& request, const CommonOptions& common) {
  const bool roi_align = request.op == "roi_align";
  // Annotations that name their own images need no -i (with --plan, the shard's list stands for it).
  const std::vector<std::string> inputs = roi_align && common.inputs.empty() && common.plan.empty()
                                              ? std::vector<std::string>{}
                                              : input_list(common, common.memory_budget());
  const std::string output = output_target(common, inputs);
  if (roi_align && !common.manifest.empty() && !io::is_manifest_path(common.manifest)) {
    usage_error("--manifest " + common.manifest + ": a manifest is .jsonl (JSON Lines) or .csv");
  }
  std::vector<Job> jobs;
  if (roi_align) {
    jobs = make_roi_align_jobs(inputs, std::get<io::RoiAlignConfig>(request.config), request.source, output, common,
                               common.plan.empty());
  } else if (request.op == "upsample2d") {
    jobs = make_upsample_jobs(inputs, std::get<io::Upsample2dConfig>(request.config), output, common);
  } else if (request.op == "resample" || request.op == "thumbnail") {
    jobs = make_resample_jobs(inputs, std::get<io::ResizeIntent>(request.config), output, common,
                              request.op == "resample" ? "resample" : "thumbnail");
  } else {
    throw InternalError("run_operator of an unknown operator " + request.op);
  }
  // Over the whole job (names that collide across shards too, and with --plan every shard's inputs), the files read
  // besides the inputs included; roi-align's: the listed inputs (an image without boxes too) and the annotations'.
  std::vector<std::string> all_inputs = inputs;
  if (roi_align) {
    for (const Job& job : jobs) all_inputs.push_back(job.input);
  }
  std::vector<std::string> manifests;  // the files with the crops' rows: the shard's own and the one merge writes
  if (roi_align && !common.manifest.empty()) manifests = {shard_manifest(common, common.manifest), common.manifest};
  const std::vector<std::string> planned = inputs_where_outputs_go(plan_all_inputs(common), jobs, manifests);
  all_inputs.insert(all_inputs.end(), planned.begin(), planned.end());
  check_jobs(all_inputs, jobs, request.other_inputs);
  if (!common.dry_run) {
    protect_inputs(all_inputs);
    protect_inputs(request.other_inputs);
    // -i - reads a copy of standard input: the file it was redirected from is not replaced either.
    if (std::find(common.inputs.begin(), common.inputs.end(), "-") != common.inputs.end()) protect_inputs({"-"});
  }
  if (common.output == "-") check_standard_output(all_inputs, request.other_inputs);
  if (roi_align && !common.manifest.empty()) {
    std::vector<std::string> outputs{shard_manifest(common, common.manifest)};  // the file this run writes
    check_output_folder(outputs.front(), "--manifest");  // it is written last: not after the crops
    if (!common.plan.empty()) outputs.push_back(common.manifest);  // the one rsz merge writes from the shards
    for (const Job& job : jobs) outputs.insert(outputs.end(), job.planned_outputs.begin(), job.planned_outputs.end());
    check_outputs(all_inputs, outputs, request.other_inputs);  // the manifest is an output like the crops
  }
  CommonOptions options = common;
  jobs = select_shard(std::move(jobs), options);
  // The jobs are checked and this shard's chosen: the GPU stage of --decode gpu is made while they are planned.
  if (!jobs.empty() && request.op != "upsample2d") start_gpu_stage(options);
  return std::make_unique<PlannedJobs>(std::move(jobs), std::move(options));
}

int run_operator(const OperatorRequest& request, const CommonOptions& common) {
  return plan_operator(request, common)->run();
}

}  // namespace rsz::app
