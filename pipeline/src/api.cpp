// rsz::pipeline::run and plan (rsz/pipeline.h): a Request made into the command line's options, run as a run of its
// own (RunState), its report returned.
#include "rsz/pipeline.h"

#include <algorithm>
#include <functional>
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
    std::string allowed;
    for (const std::string& c : row->choices) allowed += (allowed.empty() ? "" : ", ") + c;
    usage_error(what + " = \"" + app::printable(text) + "\": one of " + allowed + " is allowed");
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

// A request by command (Request::command): the command's options read as the command line reads its flags, run as
// shard I of a plan where the settings say so.
int run_command_request(const Request& request, CommonOptions& options) {
  const std::pair<const char*, bool> operator_fields[] = {
      {"rois", !request.rois.empty()},         {"image_root", !request.image_root.empty()},
      {"names", !request.names.empty()},       {"manifest", !request.manifest.empty()},
      {"skip_crowd", request.skip_crowd},      {"skip_difficult", request.skip_difficult},
      {"rois_check", request.rois_check != io::RoisCheck::Warn},
      {"size_mismatch", request.size_mismatch != io::SizeMismatch::Fail}};
  for (const auto& [name, given] : operator_fields) {
    if (given) usage_error(std::string(name) + ": a request by command gives it as an option (options[\"" + name + "\"])");
  }
  std::map<std::string, std::string> texts = request.options;
  if (const auto config = texts.find("config"); config != texts.end()) {  // --config, which the command line keeps apart
    options.config = config->second;
    texts.erase(config);
  }
  // The command's own name ("roi-align" for "roi_align"), which --plan pins as the command line does.
  const pipeline::CommandSpec* spec = pipeline::find_command(request.command);
  const std::string command = spec != nullptr ? spec->command : request.command;
  // A Bool option "false" is the flag not given, as on the command line (where --flag=false does nothing).
  for (auto it = texts.begin(); it != texts.end();) {
    const pipeline::CommandOption* row = spec != nullptr ? spec->find(it->first) : nullptr;
    it = row != nullptr && row->kind == pipeline::OptionKind::Bool && it->second == "false" ? texts.erase(it) : ++it;
  }
  if (request.command == "run") {
    const auto batch = texts.find("batch");
    if (batch == texts.end() || texts.size() != 1 || !options.config.empty()) {
      usage_error("options: run takes one option, \"batch\" (the batch file)");
    }
    const std::string file = batch->second;
    return app::run_shard_command(app::pinned_command("run", texts, options), options,
                                  [&] { return app::run_batch(file, options); });
  }
  return app::run_shard_command(app::pinned_command(command, texts, options), options, [&] {
    return app::run_operator(app::command_request(command, texts, options), options);
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
    const std::pair<const char*, bool> roi_fields[] = {
        {"rois", !request.rois.empty()},         {"image_root", !request.image_root.empty()},
        {"names", !request.names.empty()},       {"manifest", !request.manifest.empty()},
        {"skip_crowd", request.skip_crowd},      {"skip_difficult", request.skip_difficult},
        {"rois_check", request.rois_check != io::RoisCheck::Warn},
        {"size_mismatch", request.size_mismatch != io::SizeMismatch::Fail}};
    for (const auto& [name, given] : roi_fields) {
      if (given) usage_error(std::string(name) + ": only roi_align takes it, not " + request.op);
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

// Runs `body` as a run of its own (RunState) and returns its report: what it said in the messages, a refusal found
// before anything ran as status 2 with its code (status 1 for a bug inside rsz).
Report captured(bool keep_records, bool echo_stderr, const std::function<int()>& body) {
  app::detail::RunState state;
  const app::detail::RunScope scope(state);
  std::string said;
  state.in_process = true;
  state.stderr_sink = &said;
  state.quiet_stderr = !echo_stderr;
  // Without records, a run over millions of files holds its first lines only (and the last, its summary).
  if (!keep_records) state.stderr_sink_limit = 64 << 10;
  state.discard_stdout = true;  // --json lines and --dry-run lists: the records are the report's
  state.totals.keep_records = keep_records;
  int status = app::kExitOk;
  try {
    status = body();
  } catch (const Error& e) {
    // Found before anything ran: the request's fault (status 2), unless it is a bug inside rsz.
    status = e.code() == ErrorCode::Internal ? app::kExitFailed : app::kExitUsage;
    state.totals.error_code = e.code();
    state.totals.error = app::printable(e.what());
    app::to_stderr("rsz: " + state.totals.error + "\n");
  } catch (const std::exception& e) {
    status = app::kExitFailed;
    state.totals.error_code = ErrorCode::Internal;
    state.totals.error = app::printable(e.what());
    app::to_stderr("rsz: " + state.totals.error + "\n");
  }
  Report report = std::move(state.totals);
  report.status = status;
  for (std::string& line : lines_of(said)) report.messages.push_back(std::move(line));
  if (state.stderr_dropped > 0) {
    report.messages.push_back("(" + std::to_string(state.stderr_dropped) + " more messages not kept)");
    for (std::string& line : lines_of(state.stderr_last)) report.messages.push_back(std::move(line));
  }
  return report;
}

}  // namespace

Report run(const Request& request) {
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

Report plan(const Request& request) {
  Request dry = request;
  dry.settings["dry_run"] = "true";
  return run(dry);
}

}  // namespace rsz::pipeline
