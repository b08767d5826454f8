// The operator commands' own options: one declared row per option of `rsz resample`, `thumbnail`, `upsample` and
// `roi-align` besides -i/-o and the run-level settings (rsz/io/run_settings.h), in the style of the operator and
// settings tables. A row says its key (Python's keyword, and the key of Request::options), its flag, its help, the
// text it takes and the options it cannot be given with. From this table, generically:
//   * the command line: every row's flag on its command, with its help and check (app/operator_commands.cpp);
//   * rsz::pipeline::run of a Request naming a command: its options turned into the operator, its config and the ROI
//     source exactly as the command line's flags are (Python's rsz.run, run_shard and map_paths keywords);
//   * --plan's pinned parameters: every option given, by its flag's name, and the files named by `file` rows by
//     their contents.
// Adding an option to a command: one row here and its reading in pipeline/src/commands.cpp (a test fails on a row
// that no command reads).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#pragma GCC visibility push(default)

namespace rsz::pipeline {

enum class OptionKind {
  Text,    // text the command reads (a size, a list of numbers, a path)
  Bool,    // a flag without a value: "true" when given
  Choice,  // one of `choices`
  Int,     // a whole number in [min, max]
};

struct CommandOption {
  std::string key;   // "output_size": Python's keyword; the flag is "--" + key with '_' as '-'
  std::string flag;  // "--output-size"
  std::string help;  // one paragraph for --help
  OptionKind kind = OptionKind::Text;
  std::vector<std::string> choices;  // Choice
  std::int64_t min = 0;              // Int
  std::int64_t max = 0;
  bool required = false;
  std::vector<std::string> excludes;  // the keys of options it cannot be given with
  bool file = false;  // names a file (or an annotation folder) whose contents decide the outputs
  std::string field;  // the operator config field it sets alone (rsz/io/ops.h), "" for the command's own reading

  std::string long_name() const;  // "output-size"
};

struct CommandSpec {
  std::string command;  // "roi-align": the subcommand, and the command of a Request
  std::string op;       // "roi_align": the operator of configs, batch steps and records
  std::string summary;  // one line for `rsz --help`
  unsigned uses = 0;    // the run-level settings it takes (io::SettingUse bits)
  std::vector<CommandOption> options;  // in the order --help lists them
  std::string footer;   // --help's examples and notes
  const CommandOption* find(const std::string& key) const;  // nullptr when absent
};

// resample, upsample, roi-align and thumbnail, in the order `rsz --help` lists them.
const std::vector<CommandSpec>& command_specs();
// The row of `command` ("roi-align"; "roi_align" and "upsample2d", the operators' names, find theirs too), or
// nullptr.
const CommandSpec* find_command(const std::string& command);

}  // namespace rsz::pipeline

#pragma GCC visibility pop
