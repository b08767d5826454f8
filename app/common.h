// The command line's part of the pipeline: the flags every subcommand shares, registered with CLI11 and typed into
// the pipeline's CommonOptions as they are parsed (cli_options.cpp, setting_flags.cpp), and the --plan protocol
// around a parsed command (shard_params.cpp). The pipeline itself is pipeline.h (the rsz_pipeline library).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "pipeline.h"
#include "rsz/io/ops.h"

namespace rsz::app {

// A whole-number flag check with a short message ("--jobs: 'abc' is not a whole number; 0 to 4096 is allowed").
CLI::Validator whole_number(std::int64_t min, std::int64_t max);

// Adds -i/-o/--config and the run-level settings that `uses` takes (io::SettingUse bits) to an operator command.
void add_common_options(CLI::App& command, CommonOptions& options, unsigned uses, bool with_config = true);

// Registers the flag of every row that `uses` (io::SettingUse bits) takes: its help and check from the row, its text
// set into `options` as the command line is parsed (a text the row's parse refuses throws rsz::Error out of
// CLI::App::parse: a usage error in rsz's own words), and its key added to options.given.
void add_setting_flags(CLI::App& command, CommonOptions& options, unsigned uses);

// A flag whose text is one of `names` (io's list of an enum's spellings: --help shows them, and other text gets
// CLI11's one-line "--flag: TEXT not in {...}" refusal), typed into `value` by io's `parse` as it is parsed. Not
// CLI11's CheckedTransformer: its help and its refusal would spell out the mapping ("value in {a->0,...} OR {0,...}").
template <typename T>
CLI::Option* add_choice_option(CLI::App& command, const std::string& flag, T& value,
                               const std::vector<std::string>& names,
                               T (*parse)(const std::string& text, const std::string& what), const std::string& help) {
  return command
      .add_option_function<std::string>(
          flag, [&value, parse, flag](const std::string& text) { value = parse(text, flag); }, help)
      ->check(CLI::IsMember(names));
}

// The flags of an operator's config fields, made from its spec (io/ops.h): each field with a flag is registered on
// `command` with the spec's help and default and, for enums, its choices; the text given lands in texts[key] (a Bool
// field's flag stores "true"). Returns the options by key (for excludes). field_config turns the texts into a config.
using FieldTexts = std::map<std::string, std::string>;
std::map<std::string, CLI::Option*> add_field_flags(CLI::App& command, const io::OperatorSpec& spec, FieldTexts& texts);
template <typename Config>
Config field_config(const FieldTexts& texts) {
  Config config;
  for (const auto& [key, text] : texts) io::set_field(config, key, text);
  return config;
}

// Runs a parsed command: with --plan STATE --shard I (not --dry-run), refuses parameters other than the ones pinned in
// STATE/params.json, exits 0 at once when STATE/done/0000I.json says the shard is done with these parameters and
// list, pins the parameters before the first output is written, and writes the marker last, atomically, with the
// counts, whatever the exit status of a run that started.
int run_command(const CLI::App& command, const std::function<int()>& run);

}  // namespace rsz::app
