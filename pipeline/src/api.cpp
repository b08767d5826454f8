// rsz::pipeline::run and plan (rsz/pipeline.h): a Request made into the command line's options, run as a run of its
// own (RunState), its report returned.
#include "rsz/pipeline.h"

#include <algorithm>
#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>

#include "batch.h"
#include "plan_merge.h"
#include "jobs.h"
#include "rsz/pipeline/commands.h"
#include "pipeline_internal.h"

namespace rsz::pipeline {

namespace {

using app::CommonOptions;
using app::usage_error;
using pipeline::CommandSpec;

// Which settings a command takes (io::SettingUse): rsz run's, or every operator's and the resize or roi-align ones of
// its kind.
bool command_takes(const io::RunSettingSpec& row, const std::string& op) {
  if (op == "run") return (row.uses & io::kUseRun) != 0;
  if ((row.uses & io::kUseOperators) != 0) return true;
  if ((row.uses & io::kUseResize) != 0 && (op == "resample" || op == "thumbnail")) return true;
  return (row.uses & io::kUseRoiAlign) != 0 && op == "roi_align";
}

void apply_request_setting(CommonOptions& options, const std::string& op, bool by_command, const std::string& key,
                           const std::string& text) {
  const io::RunSettingSpec* row = io::find_run_setting(key);
  if (row == nullptr) {
    std::string keys;
    for (const io::RunSettingSpec& r : io::run_settings()) {
      if (command_takes(r, op) && (by_command || (r.key != "plan"))) keys += (keys.empty() ? "" : ", ") + r.key;
    }
    usage_error("settings: \"" + app::printable(key) + "\" is not a run-level setting; " + keys + " are");
  }
  const std::string what = "settings: \"" + key + "\"";
  if (!command_takes(*row, op)) usage_error(what + " is not taken by " + op);
  if (key == "plan" && !by_command) {
    usage_error(what + ": a plan's shard runs from a request naming its command and options (Request::command), "
                "which --plan pins");
  }
  if (row->kind == io::SettingKind::Bool && text != "true" && text != "false") {
    usage_error(what + " = \"" + app::printable(text) + "\": true or false is allowed");
  }
  if (row->kind == io::SettingKind::Choice &&
      std::find(row->choices.begin(), row->choices.end(), text) == row->choices.end()) {
    usage_error(what + " = \"" + app::printable(text) + "\": " + app::one_of_allowed(row->choices));
  }
  if (const std::string problem = app::setting_check(*row, text); !problem.empty()) {
    usage_error(what + " = \"" + app::printable(text) + "\": " + problem);
  }
  app::apply_setting(options, *row, text, what);
  options.given[key] = text;
}

// The operator a request runs ("run" for a batch file): its command's, or its own.
std::string op_of(const Request& request) {
  if (request.command.empty()) {
    if (request.op == "run") usage_error("op \"run\": a batch file runs from a request by command (command \"run\")");
    return request.op;
  }
  if (!request.op.empty()) usage_error("command and op: a request names one of them");
  if (request.command == "run") return "run";
  const pipeline::CommandSpec* spec = pipeline::find_command(request.command);
  if (spec == nullptr) {
    std::string names;
    for (const CommandSpec& c : command_specs()) names += c.command + ", ";
    usage_error("command \"" + app::printable(request.command) + "\": " + names + "or run is allowed");
  }
  return spec->op;
}

CommonOptions options_of(const Request& request, const std::string& op) {
  if (op != "resample" && op != "thumbnail" && op != "upsample2d" && op != "roi_align" && op != "run") {
    usage_error("op \"" + app::printable(op) + "\": resample, thumbnail, upsample2d or roi_align is allowed");
  }
  CommonOptions options;
  options.quiet = true;  // the summary is in the report; "quiet": "false" adds it to the messages
  const bool by_command = !request.command.empty();
  for (const auto& [key, text] : request.settings) apply_request_setting(options, op, by_command, key, text);
  if (request.output.empty() && op != "run") {
    usage_error("output: required (a file, a folder ending in '/' or a name template)");
  }
  if (request.output == "-") usage_error("output \"-\": standard output is the command line's (-o -)");
  for (const std::string& input : request.inputs) {
    if (input == "-") usage_error("inputs \"-\": standard input is the command line's (-i -)");
  }
  if (op == "run" && !request.inputs.empty()) usage_error("inputs: a batch file names its own");
  if (request.inputs.empty() && op != "roi_align" && op != "run" && options.plan.empty()) {
    usage_error("inputs: none given");
  }
  if (!request.inputs.empty() && !options.plan.empty()) {
    usage_error("inputs: a plan's shard runs on its own list of inputs (settings \"plan\"), not on inputs given");
  }
  options.inputs = request.inputs;
  options.output = request.output;
  options.manifest = request.manifest;
  options.rois_check = request.rois_check;
  options.size_mismatch = request.size_mismatch;
  return options;
}

// A request by command (Request::command): its options as the command line reads its flags, checked; --config
// (which the command line keeps apart) moved into `options`; the command's own name ("roi-align" for "roi_align"),
// which --plan pins as the command line does.
struct CommandTexts {
  std::string command;
  std::map<std::string, std::string> texts;
};

// The name of the first roi-align source field a request by operator sets (Request::rois, ...), or null for none.
const char* roi_field_given(const Request& request) {
  const std::pair<const char*, bool> fields[] = {
      {"rois", !request.rois.empty()},         {"image_root", !request.image_root.empty()},
      {"names", !request.names.empty()},       {"manifest", !request.manifest.empty()},
      {"skip_crowd", request.skip_crowd},      {"skip_difficult", request.skip_difficult},
      {"rois_check", request.rois_check != io::RoisCheck::Warn},
      {"size_mismatch", request.size_mismatch != io::SizeMismatch::Fail}};
  for (const auto& [name, given] : fields) {
    if (given) return name;
  }
  return nullptr;
}

CommandTexts command_texts(const Request& request, CommonOptions& options) {
  if (const char* name = roi_field_given(request)) {
    usage_error(std::string(name) + ": a request by command gives it as an option (options[\"" + name + "\"])");
  }
  CommandTexts out;
  out.texts = request.options;
  if (const auto config = out.texts.find("config"); config != out.texts.end()) {
    options.config = config->second;
    out.texts.erase(config);
  }
  const pipeline::CommandSpec* spec = pipeline::find_command(request.command);
  out.command = spec != nullptr ? spec->command : request.command;
  // A Bool option "false" is the flag not given, as on the command line (where --flag=false does nothing).
  for (auto it = out.texts.begin(); it != out.texts.end();) {
    const pipeline::CommandOption* row = spec != nullptr ? spec->find(it->first) : nullptr;
    it = row != nullptr && row->kind == pipeline::OptionKind::Bool && it->second == "false" ? out.texts.erase(it) : ++it;
  }
  return out;
}

// A request by command run as the command line runs it: as shard I of a plan where the settings say so, a batch
// file for command "run".
int run_command_request(const Request& request, CommonOptions& options) {
  const CommandTexts c = command_texts(request, options);
  if (request.command == "run") {
    const auto batch = c.texts.find("batch");
    if (batch == c.texts.end() || c.texts.size() != 1 || !options.config.empty()) {
      usage_error("options: run takes one option, \"batch\" (the batch file)");
    }
    const std::string file = batch->second;
    return app::run_shard_command(app::pinned_command("run", c.texts, options), options,
                                  [&] { return app::run_batch(file, options); });
  }
  return app::run_shard_command(app::pinned_command(c.command, c.texts, options), options, [&] {
    return app::run_operator(app::command_request(c.command, c.texts, options), options);
  });
}

app::OperatorRequest operator_of(const Request& request, const CommonOptions& options) {
  app::OperatorRequest op;
  op.op = request.op;
  op.config = request.config;
  const bool wanted = request.op == "roi_align" ? std::holds_alternative<io::RoiAlignConfig>(request.config)
                      : request.op == "upsample2d" ? std::holds_alternative<io::Upsample2dConfig>(request.config)
                                                   : std::holds_alternative<io::ResizeIntent>(request.config);
  if (!wanted) usage_error("config: not the config of " + request.op);
  if (request.op != "roi_align") {
    if (const char* name = roi_field_given(request)) {
      usage_error(std::string(name) + ": only roi_align takes it, not " + request.op);
    }
  }
  if (request.op == "roi_align") {
    if (request.rois.empty()) usage_error("rois: required for roi_align (a JSON, COCO, VOC, YOLO or dataset file)");
    const io::RoiAlignConfig& c = std::get<io::RoiAlignConfig>(request.config);
    if (!c.output_height || !c.output_width) usage_error("config: roi_align needs output_height and output_width");
    const std::uint64_t budget = options.memory_budget();
    if (!app::is_tensor_path(request.rois)) app::check_json_budget(request.rois, "rois", budget);
    if (!request.names.empty()) app::check_json_budget(request.names, "names", budget);
    op.source.rois_path = request.rois;
    op.source.image_root = request.image_root;
    op.source.names_path = request.names;
    op.source.skip_crowd = request.skip_crowd;
    op.source.skip_difficult = request.skip_difficult;
    op.other_inputs = {request.rois, request.names};
  }
  if (request.op == "upsample2d" && !std::get<io::Upsample2dConfig>(request.config).scale_size) {
    usage_error("config: upsample2d needs scale_size");
  }
  return op;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("rsz: ", 0) == 0) line.erase(0, 5);
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

}  // namespace

Request request_of(const io::BatchStep& step) {
  Request r;
  r.op = step.op;
  std::visit([&r](const auto& config) { r.config = config; }, step.config);
  r.rois = step.rois_path;
  r.image_root = step.image_root;
  r.names = step.names_path;
  if (step.rois_check) r.rois_check = *step.rois_check;
  if (step.size_mismatch) r.size_mismatch = *step.size_mismatch;
  r.skip_crowd = step.skip_crowd;
  r.skip_difficult = step.skip_difficult;
  return r;
}

namespace {

// A run of its own (RunState) that keeps what it says: a library call's, or a plan's from its planning to its run.
class Captured {
 public:
  Captured(bool keep_records, bool echo_stderr) {
    run_.in_process = true;
    run_.stderr_sink = &said_;
    run_.quiet_stderr = !echo_stderr;
    // Without records, a run over millions of files holds its first lines only (and the last, its summary).
    if (!keep_records) run_.stderr_sink_limit = 64 << 10;
    run_.discard_stdout = true;  // --json lines and --dry-run lists: the records are the report's
    run_.totals.keep_records = keep_records;
  }
  Captured(const Captured&) = delete;
  Captured& operator=(const Captured&) = delete;

  // What the run writes to standard output goes to `sink` instead of being dropped.
  void capture_stdout(std::string* sink) {
    run_.discard_stdout = false;
    run_.stdout_sink = sink;
  }

  // Runs `body` in this run: its status, or for a refusal found before anything ran, status 2 with its code (status
  // 1 for a bug inside rsz).
  int guarded(const std::function<int()>& body) {
    const app::detail::RunScope scope(run_);
    try {
      return body();
    } catch (const Error& e) {
      // Found before anything ran: the request's fault (status 2), unless it is a bug inside rsz.
      refused(e.code(), e.what());
      return e.code() == ErrorCode::Internal ? app::kExitFailed : app::kExitUsage;
    } catch (const std::exception& e) {
      refused(ErrorCode::Internal, e.what());
      return app::kExitFailed;
    }
  }

  // The report so far, with `status`: a copy (a plan's, whose run goes on) or, when `take`, the run's own, and the
  // run is over: what it held for its jobs (the GPU stage of --decode gpu: its workers and memory) is handed to the
  // process's keeper for its next runs or let go (end_gpu_stage), also where this object lives on in a kept Plan.
  Report report(int status, bool take) {
    if (take) {
      const std::lock_guard<std::mutex> lock(run_.gpu_mutex);
      app::end_gpu_stage(run_);  // kept for this process's next runs
    }
    Report report = take ? std::move(run_.totals) : run_.totals;
    report.status = status;
    for (std::string& line : lines_of(said_)) report.messages.push_back(std::move(line));
    if (run_.stderr_dropped > 0) {
      report.messages.push_back("(" + std::to_string(run_.stderr_dropped) + " more messages not kept)");
      for (std::string& line : lines_of(run_.stderr_last)) report.messages.push_back(std::move(line));
    }
    return report;
  }

 private:
  void refused(ErrorCode code, const char* what) {
    run_.totals.error_code = code;
    run_.totals.error = app::printable(what);
    app::to_stderr("rsz: " + run_.totals.error + "\n");
  }

  app::detail::RunState run_;
  std::string said_;
};

Report captured(bool keep_records, bool echo_stderr, const std::function<int()>& body) {
  Captured run(keep_records, echo_stderr);
  const int status = run.guarded(body);
  return run.report(status, true);
}

// A report of status 2 for a plan that cannot run, with its code and line.
Report refused_report(const std::string& error) {
  Report report;
  report.status = app::kExitUsage;
  report.error_code = ErrorCode::InvalidArgument;
  report.error = error;
  report.messages.push_back(error);
  return report;
}

// A request that runs a plan's shard or a batch file: planned as it runs (Plan's note).
bool planned_as_it_runs(const Request& request) {
  return request.command == "run" || request.settings.count("plan") > 0;
}

// The request run as the command line runs it, planning included.
Report run_whole(const Request& request) {
  return captured(request.keep_records, request.echo_stderr, [&request] {
    const std::string op = op_of(request);
    CommonOptions options = options_of(request, op);
    for (const std::string& input : request.inputs) {
      if (!request.inputs_below.empty()) app::detail::set_input_below(input, request.inputs_below);
    }
    return request.command.empty() ? app::run_operator(operator_of(request, options), options)
                                   : run_command_request(request, options);
  });
}

}  // namespace

struct Plan::State {
  Request request;  // a request planned as it runs (planned_as_it_runs)
  bool as_it_runs = false;
  std::unique_ptr<Captured> run;
  std::unique_ptr<app::PlannedJobs> jobs;  // null: refused
  std::mutex mutex;  // held while it runs
  std::atomic<bool> ran{false};
};

bool Plan::runnable() const {
  if (!state_ || state_->ran.load()) return false;
  if (state_->as_it_runs) {
    const auto dry = state_->request.settings.find("dry_run");
    return report.status != app::kExitUsage && (dry == state_->request.settings.end() || dry->second != "true");
  }
  return state_->jobs != nullptr && !state_->jobs->options().dry_run;
}

namespace {

// Plans an operator's request (by operator or by command, not a shard's or a batch's) in `state`: its report so far
// (status 2 for a refusal, with state.jobs left null).
int plan_operator_request(const Request& request, Plan::State& state) {
  return state.run->guarded([&] {
    const std::string op = op_of(request);
    CommonOptions options = options_of(request, op);
    for (const std::string& input : request.inputs) {
      if (!request.inputs_below.empty()) app::detail::set_input_below(input, request.inputs_below);
    }
    if (request.command.empty()) {
      state.jobs = app::plan_operator(operator_of(request, options), options);
    } else {
      const CommandTexts c = command_texts(request, options);
      state.jobs = app::plan_operator(app::command_request(c.command, c.texts, options), options);
    }
    return app::kExitOk;
  });
}

// The plan's view: its Planned and Failed records (kept as the request asks), counts and status, the failures' lines.
void add_plan_view(const app::PlannedJobs& jobs, Report& report) {
  std::set<std::size_t> failed;
  std::vector<Record> records = jobs.records();
  for (Record& record : records) {
    if (record.kind != RecordKind::Failed) continue;
    failed.insert(record.index);
    report.messages.push_back(app::printable(record.message));
    if (report.failures.size() < Report::kMaxFailuresKept) report.failures.push_back(record);
  }
  if (report.keep_records) {  // after planning's warnings, in the order of the inputs
    report.records.insert(report.records.end(), std::make_move_iterator(records.begin()),
                          std::make_move_iterator(records.end()));
    std::stable_sort(report.records.begin(), report.records.end(),
                     [](const Record& a, const Record& b) { return a.index < b.index; });
  }
  report.jobs += jobs.size();
  report.failed += failed.size();
  report.skipped += jobs.skipped();
  report.status = failed.empty() ? app::kExitOk : app::kExitFailed;
}

// Runs a planned operator request (state.jobs) once: the run's own report.
Report run_planned(Plan::State& state) {
  const int status = state.run->guarded([&state] { return state.jobs->run(); });
  return state.run->report(status, true);
}

}  // namespace

Plan plan(const Request& request) {
  Plan planned;
  planned.state_ = std::make_shared<Plan::State>();
  Plan::State& state = *planned.state_;
  if (planned_as_it_runs(request)) {
    state.as_it_runs = true;
    state.request = request;
    Request dry = request;
    dry.settings["dry_run"] = "true";
    planned.report = run_whole(dry);
    return planned;
  }
  state.run = std::make_unique<Captured>(request.keep_records, request.echo_stderr);
  const int status = plan_operator_request(request, state);
  planned.report = state.run->report(status, false);
  if (state.jobs != nullptr) add_plan_view(*state.jobs, planned.report);
  return planned;
}

Report run(const Plan& plan) {
  if (!plan.state_) return refused_report("plan: an empty Plan (rsz::pipeline::plan(request) makes one)");
  Plan::State& state = *plan.state_;
  const std::lock_guard<std::mutex> lock(state.mutex);
  if (state.ran) return refused_report("plan: this plan ran already (a Plan runs once: plan the request again)");
  if (!state.as_it_runs && state.jobs == nullptr) return plan.report;  // refused: why
  state.ran = true;
  if (!state.as_it_runs && state.jobs->options().dry_run) return plan.report;  // a dry run: the plan is all it does
  if (state.as_it_runs) return run_whole(state.request);
  return run_planned(state);
}

std::size_t release_gpu_stages() { return app::release_kept_gpu_stages(); }

Report run(const Request& request) {
  if (planned_as_it_runs(request)) return run_whole(request);
  Plan::State state;
  state.run = std::make_unique<Captured>(request.keep_records, request.echo_stderr);
  const int status = plan_operator_request(request, state);
  if (state.jobs == nullptr) return state.run->report(status, true);
  return run_planned(state);
}

MergeResult merge(const MergeRequest& request) {
  MergeResult result;
  Captured run(true, false);
  run.capture_stdout(&result.json);
  const int status = run.guarded([&request] {
    if (request.state.empty()) usage_error("state: required (the folder rsz plan wrote)");
    app::MergeOptions o;
    o.state = request.state;
    o.json = true;
    o.clean = request.clean;
    return app::run_merge(o);
  });
  result.report = run.report(status, true);
  if (status == app::kExitUsage) result.json.clear();
  while (!result.json.empty() && result.json.back() == '\n') result.json.pop_back();
  return result;
}

Report make_plan(const PlanRequest& request) {
  return captured(false, false, [&request] {
    if (request.inputs.empty()) usage_error("inputs: none given");
    if (request.state.empty()) usage_error("state: required (the folder to create)");
    if (request.shards < 1 || request.shards > 1000000) {
      usage_error("shards " + std::to_string(request.shards) + ": a whole number from 1 to 1000000 is allowed");
    }
    for (const std::string& input : request.inputs) {
      if (input == "-") usage_error("inputs \"-\": standard input cannot be planned");
    }
    app::PlanOptions o;
    o.inputs = request.inputs;
    o.output = request.state;
    o.shards = request.shards;
    o.recursive = request.recursive;
    o.hidden = request.hidden;
    o.quiet = true;
    return app::run_plan(o);
  });
}

}  // namespace rsz::pipeline
