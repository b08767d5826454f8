// The command line's part of the pipeline: the flags every subcommand shares, registered with CLI11 and typed into
// the pipeline's CommonOptions as they are parsed (cli_options.cpp, setting_flags.cpp). The pipeline itself is
// pipeline.h (the rsz_pipeline library).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "pipeline.h"

namespace rsz::app {

// A whole-number flag check with a short message ("--jobs: 'abc' is not a whole number; 0 to 4096 is allowed").
CLI::Validator whole_number(std::int64_t min, std::int64_t max);

// Adds -i/-o/--config and the run-level settings that `uses` takes (io::SettingUse bits) to an operator command.
void add_common_options(CLI::App& command, CommonOptions& options, unsigned uses, bool with_config = true);

// Registers the flag of every row that `uses` (io::SettingUse bits) takes: its help and check from the row, its text
// set into `options` as the command line is parsed (a text the row's parse refuses throws rsz::Error out of
// CLI::App::parse: a usage error in rsz's own words), and its key added to options.given.
void add_setting_flags(CLI::App& command, CommonOptions& options, unsigned uses);

}  // namespace rsz::app
