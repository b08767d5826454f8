// The run-level settings: one declared row per setting of a job that is not an operator's field (threads, output
// encoding, limits, resume, shards, ...), in the style of the operator table (ops.h). A row says its key (the Python
// keyword and, unless it says another, the batch file's key), its command-line flag, its help, its kind and allowed
// values, which commands take it, whether it changes what an input's outputs are, and whether a batch file may set
// it. From this table, generically:
//   * the command line: every row's flag on the commands it names, with its help and the check of its text
//     (app/settings.cpp add_setting_flags); `rsz run` takes every row that is not for single-output commands only;
//   * batch files: the top-level keys of rows with a batch key, their JSON check (batch_file.cpp) and their overlay
//     under the flags given to `rsz run` (a flag given wins over the file's key);
//   * --plan's pinned parameters: only rows that change outputs are pinned (app/shards.cpp);
//   * the JSON Schema of batch files (configs/schema/batch.schema.json), the completions (checked against --help)
//     and the Python keywords (the key; '_' is '-' in the flag): tests fail on any drift.
// Adding a run-level boolean: its CommonOptions member (app/common.h), one row here, one binding line in
// app/settings.cpp (a test fails where a row has none), and, for a batch key, the schema property.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#pragma GCC visibility push(default)

namespace rsz::io {

enum class SettingKind {
  Bool,    // a flag without a value; a JSON boolean
  Int,     // a whole number in [min, max]; a JSON integer
  Choice,  // one of `choices`; a JSON string (or an integer whose text is a choice: "depth": 16)
  Text,    // text the command line reads (a size, a colour, a shard, a folder); a non-empty JSON string
};

// Which commands take a setting: a bit set of these.
enum SettingUse : unsigned {
  kUseOperators = 1,   // every operator command (resample and its presets, thumbnail, upsample, roi-align)
  kUseRun = 2,         // rsz run
  kUseResize = 4,      // resample, its presets and thumbnail only
  kUseRoiAlign = 8,    // roi-align only
};

struct RunSettingSpec {
  std::string key;        // "skip_existing": the Python keyword, and the batch key unless `batch_key` says another
  std::string flag;       // CLI11's names: "--skip-existing", "-j,--jobs"
  std::string help;       // one paragraph for --help, its default said
  SettingKind kind = SettingKind::Bool;
  std::vector<std::string> choices;  // Choice
  std::int64_t min = 0;              // Int
  std::int64_t max = 0;
  unsigned uses = kUseOperators | kUseRun;  // SettingUse bits
  bool changes_outputs = true;  // false: scheduling, input selection and reporting; not pinned by --plan
  std::string batch_key;        // the batch file's top-level key; "" where a batch file cannot set it
  bool batch_inverted = false;  // a Bool whose batch key says the opposite ("exif": false is --no-exif)

  // The flag's long name without dashes ("skip-existing"): the key CLI11's config text and messages use.
  std::string long_name() const;
};

// Every run-level setting, in the order --help lists them.
const std::vector<RunSettingSpec>& run_settings();
// The row of `key` (or nullptr).
const RunSettingSpec* find_run_setting(const std::string& key);

}  // namespace rsz::io

#pragma GCC visibility pop
