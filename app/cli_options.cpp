// The command line's shared flags: -i/-o/--config with the run-level settings (add_common_options), the operator
// fields' flags made from io's spec tables (add_field_flags), and the whole-number check of number flags.
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <limits>
#include <string>

#include "common.h"

namespace rsz::app {

CLI::Validator whole_number(std::int64_t min, std::int64_t max) {
  const std::string allowed = max == std::numeric_limits<std::int64_t>::max()
                                  ? "a whole number >= " + std::to_string(min)
                                  : "a whole number from " + std::to_string(min) + " to " + std::to_string(max);
  return CLI::Validator(
      [min, max, allowed](std::string& text) -> std::string {
        errno = 0;
        char* end = nullptr;
        const long long v = std::strtoll(text.c_str(), &end, 10);
        if (text.empty() || end == text.c_str() || *end != '\0' || errno == ERANGE || v < min || v > max) {
          return "'" + printable(text) + "' is not allowed; " + allowed + " is";
        }
        return std::string();
      },
      allowed);
}

void add_common_options(CLI::App& command, CommonOptions& options, unsigned uses, bool with_config) {
  command.add_option("-i,--input,inputs", options.inputs,
                     "Input images or .npy tensors: files, folders or quoted globs ('photos/*.jpg'); repeatable, "
                     "or given as arguments: rsz resample a.jpg b.jpg -o out/ --scale 0.5; - reads standard input");
  command.add_option("-o,--output", options.output,
                     "Output file, folder (- is standard output), or name template using {stem} {ext} {op} {index} "
                     "{label} {id}, and "
                     "{dir} {relpath} {parent} (the input's folder below -i's, with its stem, its folder's name: "
                     "-r -o 'out/{relpath}.png' mirrors a tree); or webdataset tar shards, 'out/{shard}-{part}.tar' "
                     "(a name ending in .tar: {part} required, {shard} allowed; see --tar-part-size)");
  if (with_config) command.add_option("--config", options.config, "Operator config JSON; flags override its keys");
  add_setting_flags(command, options, uses);
}

std::map<std::string, CLI::Option*> add_field_flags(CLI::App& command, const io::OperatorSpec& spec,
                                                     FieldTexts& texts) {
  std::map<std::string, CLI::Option*> options;
  for (const io::FieldSpec& field : spec.fields) {
    if (field.flag.empty()) continue;  // set through a shorthand of the command (--output-size, --samples, ...)
    std::string help = field.help;
    if (!field.default_json.empty() && field.kind != io::FieldKind::Bool) {  // a flag's default is its absence
      std::string shown = field.default_json;
      shown.erase(std::remove(shown.begin(), shown.end(), '"'), shown.end());
      help += " (default " + shown + ")";
    }
    const std::string key = field.key;
    CLI::Option* option = nullptr;
    if (field.kind == io::FieldKind::Bool) {
      option = command.add_flag_callback(field.flag, [&texts, key] { texts[key] = "true"; }, help);
    } else {
      option = command.add_option_function<std::string>(
          field.flag, [&texts, key](const std::string& text) { texts[key] = text; }, help);
      if (field.kind == io::FieldKind::Enum) option->check(CLI::IsMember(field.choices));
    }
    options[key] = option;
  }
  return options;
}

}  // namespace rsz::app
