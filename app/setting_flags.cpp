// The run-level settings' flags (pipeline.h, rsz/io/run_settings.h) registered with CLI11 from the table.
#include <string>

#include "common.h"
#include "rsz/io/run_settings.h"

namespace rsz::app {

void add_setting_flags(CLI::App& command, CommonOptions& options, unsigned uses) {
  for (const io::RunSettingSpec& row : io::run_settings()) {
    if ((row.uses & uses) == 0) continue;
    const std::string flag = "--" + row.long_name();
    CLI::Option* option = nullptr;
    if (row.kind == io::SettingKind::Bool) {
      // --strict, and --strict=false (which also beats a batch file's "strict": true); the last one given counts.
      option = command
                   .add_flag_function(
                       row.flag,
                       [&options, &row, flag](std::int64_t count) {
                         const char* text = count > 0 ? "true" : "false";
                         apply_setting(options, row, text, flag);
                         options.given[row.key] = text;
                       },
                       row.help)
                   ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    } else {
      option = command.add_option_function<std::string>(
          row.flag,
          [&options, &row, flag](const std::string& text) {
            apply_setting(options, row, text, flag);
            options.given[row.key] = text;
          },
          row.help);
    }
    if (row.kind == io::SettingKind::Int) option->type_name("INT")->check(whole_number(row.min, row.max));
    if (row.kind == io::SettingKind::Choice) option->check(CLI::IsMember(row.choices));
    // The binding's own check (--backend cuda where this build or machine has no usable CUDA backend).
    option->check(
        CLI::Validator([&row](std::string& text) { return setting_check(row, text); }, "", row.long_name()));
  }
}

}  // namespace rsz::app
