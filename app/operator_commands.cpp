// The operator subcommands (resample, upsample, roi-align, thumbnail), registered with CLI11 from the pipeline's
// table of their options (rsz/pipeline/commands.h): each row's flag with its help and check, its text kept by key;
// the pipeline turns the texts into the operator request and runs it, as it does a library call's.
#include <memory>

#include "commands.h"
#include "rsz/pipeline/commands.h"
#include "shard_run.h"

namespace rsz::app {

namespace {

struct OperatorOptions {
  CommonOptions common;
  std::map<std::string, std::string> texts;  // the command's options given, by key
};

std::function<int()> setup_operator(CLI::App& app, const pipeline::CommandSpec& spec) {
  auto o = std::make_shared<OperatorOptions>();
  CLI::App* cmd = app.add_subcommand(spec.command, spec.summary);
  add_common_options(*cmd, o->common, spec.uses);
  std::map<std::string, CLI::Option*> added;
  for (const pipeline::CommandOption& row : spec.options) {
    const std::string key = row.key;
    CLI::Option* option = nullptr;
    if (row.kind == pipeline::OptionKind::Bool) {
      option = cmd->add_flag_callback(row.flag, [o, key] { o->texts[key] = "true"; }, row.help);
    } else {
      option = cmd->add_option_function<std::string>(
          row.flag, [o, key](const std::string& text) { o->texts[key] = text; }, row.help);
    }
    if (row.kind == pipeline::OptionKind::Choice) option->check(CLI::IsMember(row.choices));
    if (row.kind == pipeline::OptionKind::Int) option->type_name("INT")->check(whole_number(row.min, row.max));
    if (row.required) option->required();
    added[key] = option;
  }
  for (const pipeline::CommandOption& row : spec.options) {
    for (const std::string& other : row.excludes) added.at(row.key)->excludes(added.at(other));
  }
  cmd->footer(spec.footer);
  const std::string command = spec.command;
  return [o, command] {
    CommonOptions& common = o->common;
    return run_shard_command(pinned_command(command, o->texts, common), common, [&] {
      return run_operator(command_request(command, o->texts, common), common);
    });
  };
}

}  // namespace

const std::vector<OperatorCommand>& operator_commands() {
  static const std::vector<OperatorCommand> table = [] {
    std::vector<OperatorCommand> rows;
    for (const pipeline::CommandSpec& spec : pipeline::command_specs()) {
      rows.push_back({spec.command, spec.op, [&spec](CLI::App& app) { return setup_operator(app, spec); }});
    }
    return rows;
  }();
  return table;
}

}  // namespace rsz::app
